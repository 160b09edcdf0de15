export { loadConfig, buildConfig, ConfigError, effectiveExternalUrl, type Overrides } from './load.js';
export { OPTIONS, type NodeConfig, type OptionSpec } from './schema.js';
