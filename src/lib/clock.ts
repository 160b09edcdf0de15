/** The clock seam: domains take a Clock so tests can pass a controllable one instead of mocking Date. */
export interface Clock {
  /** Wall-clock milliseconds since the Unix epoch. */
  now(): number;
  /** Monotonic milliseconds, for measuring durations. */
  monotonic(): number;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
};

export class ManualClock implements Clock {
  constructor(private ms: number) {}
  now(): number {
    return this.ms;
  }
  monotonic(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}
