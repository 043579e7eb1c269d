import { afterEach, expect, test, vi } from 'vitest';
import { subscribeRuns } from './workspace.ts';

/** A stand-in for the browser's EventSource that the test opens and feeds by hand. */
class FakeEventSource {
  static last: FakeEventSource | undefined;
  onopen: (() => void) | null = null;
  closed = false;
  private listeners = new Map<string, Array<() => void>>();
  constructor(readonly url: string) {
    FakeEventSource.last = this;
  }
  addEventListener(type: string, fn: () => void) {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), fn]);
  }
  emit(type: string) {
    for (const fn of this.listeners.get(type) ?? []) fn();
  }
  close() {
    this.closed = true;
  }
}

afterEach(() => vi.unstubAllGlobals());

test('the runs stream refreshes on its first open too: a run that finished before the stream connected is not missed', () => {
  vi.stubGlobal('EventSource', FakeEventSource);
  const onRun = vi.fn();
  const off = subscribeRuns(onRun, 'wf-1');
  const source = FakeEventSource.last!;
  expect(source.url).toBe('/api/v1/workflow-runs/stream?workflowId=wf-1');
  expect(onRun).not.toHaveBeenCalled();

  source.onopen!();
  expect(onRun).toHaveBeenCalledTimes(1);
  source.emit('run');
  expect(onRun).toHaveBeenCalledTimes(2);
  // A reconnect (EventSource opens again by itself) refreshes as well.
  source.onopen!();
  expect(onRun).toHaveBeenCalledTimes(3);

  off();
  expect(source.closed).toBe(true);
});
