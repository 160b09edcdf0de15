export { ClusterService, SelfLiveness, type Liveness, type NodeView } from './cluster-service.js';
export { validateLayout, defaultLayout, toWire, MAX_PARTITIONS, type PartitionEntry } from './partition-layout.js';
export { owners, ownedBy, firstLiveHost, handoversNeeded, type Handover, type HandoverPhase } from './ownership.js';
export { Membership, parseAddr, type MembershipOptions, type MembershipEvents, type MemberView, type DownReason } from './protocol/membership.js';
export { PROTOCOL_VERSION, DEFAULT_MAX_FRAME_BYTES } from './protocol/frames.js';
export type { HandlerContext, UnaryHandler, StreamHandler, RequestOptions, StreamOptions } from './protocol/rpc.js';
export type { ClusterSizes, NodeSizes, Tally } from './replication-sizes.js';
