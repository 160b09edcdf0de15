export { ClusterService, SelfLiveness, type Liveness, type NodeView } from './cluster-service.js';
export { validateLayout, defaultLayout, toWire, MAX_PARTITIONS, type PartitionEntry } from './partition-layout.js';
