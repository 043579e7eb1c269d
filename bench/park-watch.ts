// What bench:wait reports about parking (bench/wait.ts): whether all N runs were parked at once, and
// if not, the peak: how many waited at once, when, and the memory then. Per waiting run is the heap
// above idle at that moment divided by the runs waiting then — never by N when fewer waited.
export interface Memory {
  heap: number;
  rss: number;
}

export class ParkWatch {
  /** ms after the first publish when all N runs were waiting at once; null: never. */
  allParkedAfterMs: number | null = null;
  peakWaiting = 0;
  peakAfterMs = 0;
  peakMemory: Memory;

  constructor(
    private readonly total: number,
    private readonly idle: Memory,
  ) {
    this.peakMemory = idle;
  }

  /** One poll: runs waiting now, ms since the first publish; `measure` (a GC and a reading) runs only at a new peak. */
  observe(waiting: number, elapsedMs: number, measure: () => Memory): void {
    if (waiting <= this.peakWaiting) return;
    this.peakWaiting = waiting;
    this.peakAfterMs = elapsedMs;
    this.peakMemory = measure();
    if (waiting >= this.total && this.allParkedAfterMs === null) this.allParkedAfterMs = elapsedMs;
  }

  /** Heap above idle per run waiting at the peak; null when none waited. */
  perWaitingRunBytes(): number | null {
    return this.peakWaiting > 0 ? (this.peakMemory.heap - this.idle.heap) / this.peakWaiting : null;
  }

  /** The parking line of the report. */
  parkedLine(): string {
    if (this.allParkedAfterMs !== null) return `all ${this.total} parked after ${this.allParkedAfterMs} ms`;
    if (this.peakWaiting === 0) return `no run was seen parked (every poll found none waiting)`;
    return `never all ${this.total} parked at once (runs resumed before the last parked): peak ${this.peakWaiting} waiting, ${this.peakAfterMs} ms after the first publish`;
  }

  /** The memory line of the report, at all parked or at the peak. */
  memoryLine(after: Memory): string {
    const mb = (b: number) => (b / 1024 / 1024).toFixed(1);
    const at = this.allParkedAfterMs !== null ? `all ${this.total} parked` : `peak (${this.peakWaiting} waiting)`;
    const per = this.perWaitingRunBytes();
    return (
      `memory: idle heap ${mb(this.idle.heap)} MB rss ${mb(this.idle.rss)} MB; ${at} heap ${mb(this.peakMemory.heap)} MB (+${mb(this.peakMemory.heap - this.idle.heap)})` +
      ` rss ${mb(this.peakMemory.rss)} MB (+${mb(this.peakMemory.rss - this.idle.rss)}); per waiting run ${per === null ? 'n/a (none waited)' : `${per.toFixed(0)} B heap`}; after all resumed heap ${mb(after.heap)} MB`
    );
  }
}
