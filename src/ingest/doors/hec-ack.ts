/**
 * Splunk HEC indexer-acknowledgement ids that every node of a cluster can check, with no state
 * shared or kept (docs/ingest-doors.md, "Indexer acknowledgement"). A HEC success answer is sent only
 * once its events are durable, so an id is acknowledged exactly when it was handed out; an id
 * carries the proof of that itself:
 *
 *   id = serial * 2^20 + check(repository id, channel, serial)
 *
 * `serial` is 33 bits from a counter each node process starts at a random place (so ids handed out
 * on one channel by different nodes, or by one node before and after a restart, do not repeat
 * while a client may still hold them), `check` 20 bits of SHA-256 over the token's repository id
 * (global state: every node knows it), the channel and the serial. 53 bits in all: a safe integer,
 * exact in every client's JSON. Behind a load balancer the ack request may reach any node, which
 * recomputes the check: true for every id any node handed out on that channel for that repository,
 * after restarts too; false for ids never handed out, or asked about on another channel or with
 * another repository's token (but for one made-up id in a million).
 *
 * The check is not a secret, and need not be: the only one an id made up to pass it can deceive is
 * the client that made it up (it gets told that events it never sent are durable). Every id a real
 * client holds came in a success answer, sent after its events were durable.
 */
import { createHash, randomInt } from 'node:crypto';

const CHECK_BITS = 20;
const CHECK_SPAN = 2 ** CHECK_BITS;
/** Serials below this: with the check, ids stay below 2^53. */
const SERIAL_SPAN = 2 ** 33;

function check(repositoryId: string, channel: string, serial: number): number {
  return createHash('sha256').update(`logsvc-hec-ack\u0000${repositoryId}\u0000${channel}\u0000${serial}`).digest().readUInt32BE(0) >>> (32 - CHECK_BITS);
}

/** Hands out ack ids; one per node process (the HEC routes'). */
export class HecAckIds {
  private next: number;

  constructor(start: number = randomInt(0, SERIAL_SPAN)) {
    if (!Number.isSafeInteger(start) || start < 0 || start >= SERIAL_SPAN) throw new RangeError(`HecAckIds: start must be an integer in [0, 2^33), not ${start}`);
    this.next = start;
  }

  /** A new id for a request on `channel` whose events are durable. */
  issue(repositoryId: string, channel: string): number {
    const serial = this.next;
    this.next = (serial + 1) % SERIAL_SPAN;
    return serial * CHECK_SPAN + check(repositoryId, channel, serial);
  }
}

/** Whether `id` was handed out (by any node) on `channel` for a request into `repositoryId`. */
export function isIssuedAckId(repositoryId: string, channel: string, id: number): boolean {
  if (!Number.isSafeInteger(id) || id < 0) return false;
  return id % CHECK_SPAN === check(repositoryId, channel, Math.floor(id / CHECK_SPAN));
}
