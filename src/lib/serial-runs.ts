/**
 * Background work that runs one at a time, started by a timer and by events: a kick while a run is
 * under way asks for exactly one more run after it (kicks meanwhile coalesce), so a burst of events
 * costs at most two runs and runs never overlap.
 */
export class SerialRuns<T> {
  private running: Promise<T> | null = null;
  private again = false;
  private stopped = false;

  constructor(
    private readonly work: () => Promise<T>,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Starts a run now, or right after the one under way. */
  kick(): void {
    if (this.stopped) return;
    if (this.running !== null) {
      this.again = true;
      return;
    }
    void this.run().catch(this.onError);
  }

  /** The run under way, or a new one: resolves with its outcome. */
  run(): Promise<T> {
    if (this.running !== null) return this.running;
    const run = this.work().finally(() => {
      this.running = null;
      if (this.again && !this.stopped) {
        this.again = false;
        this.kick();
      }
    });
    this.running = run;
    return run;
  }

  /** No new runs; resolves when the one under way has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.running?.catch(() => undefined);
  }
}
