/**
 * DeliveryQueue: runs the action deliveries of triggered alerts, at most
 * `alerts.max_concurrent_deliveries` at once, in the order they were handed over. Deliveries are
 * kept apart from evaluations so that an action that hangs (a blackholed webhook: timeouts and
 * retries can take minutes) holds a delivery slot, never an evaluation slot, and other alerts keep
 * being evaluated and triggered. The wait list needs no bound of its own: an alert is not
 * evaluated again while its delivery waits or runs, so it holds at most one entry per alert.
 */
export class DeliveryQueue {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly maxConcurrent: number) {}

  /** Deliveries waiting for a slot. */
  get queued(): number {
    return this.waiting.length;
  }

  /** Runs `job` once a slot is free; settles as the job does. */
  async run<T>(job: () => Promise<T>): Promise<T> {
    if (this.running < this.maxConcurrent) this.running++;
    // The finishing job hands its slot over, so `running` stays counted.
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await job();
    } finally {
      const next = this.waiting.shift();
      if (next !== undefined) next();
      else this.running--;
    }
  }
}
