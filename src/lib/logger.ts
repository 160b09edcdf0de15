/**
 * The logging facade: one line per message on stderr, `<iso time> <level> <message> key=value...`.
 * Nothing here knows about tokens: callers never pass secrets in (see docs/ARCHITECTURE.md, security).
 */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

function formatFields(fields: Record<string, unknown> | undefined): string {
  if (fields === undefined) return '';
  let out = '';
  for (const [k, v] of Object.entries(fields)) {
    const s = typeof v === 'string' ? v : JSON.stringify(v);
    out += ` ${k}=${/[\s"=]/.test(s ?? '') ? JSON.stringify(s) : s}`;
  }
  return out;
}

export function createLogger(level: LogLevel = 'info', write: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  const min = ORDER[level];
  const emit = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>): void => {
    if (ORDER[lvl] < min) return;
    write(`${new Date().toISOString()} ${lvl.toUpperCase()} ${msg}${formatFields(fields)}\n`);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
  };
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** One log call, as handed to a tap (the node's own logs ingested into `humio`). */
export interface LogEntry {
  time: number;
  level: LogLevel;
  message: string;
  fields: Record<string, unknown> | undefined;
}

/**
 * A logger that writes to `base` and hands every call at `tapLevel` or above to `tap`. The tap must
 * not throw and must not block (it only queues); a throwing tap is ignored, never the log line.
 */
export function teeLogger(base: Logger, tapLevel: LogLevel, tap: (e: LogEntry) => void): Logger {
  const min = ORDER[tapLevel];
  const emit = (level: LogLevel, message: string, fields?: Record<string, unknown>): void => {
    base[level](message, fields);
    if (ORDER[level] < min) return;
    try {
      tap({ time: Date.now(), level, message, fields });
    } catch {
      // The tap's problem is its own: logging goes on.
    }
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
  };
}

/** `logger` with `module` added to every line's fields (the module a line came from). */
export function withModule(logger: Logger, module: string): Logger {
  const add = (f?: Record<string, unknown>): Record<string, unknown> => ({ module, ...f });
  return {
    debug: (m, f) => logger.debug(m, add(f)),
    info: (m, f) => logger.info(m, add(f)),
    warn: (m, f) => logger.warn(m, add(f)),
    error: (m, f) => logger.error(m, add(f)),
  };
}
