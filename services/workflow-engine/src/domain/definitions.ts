import type { WorkflowChanged, WorkflowDefinition, WorkflowDefinitionPage } from '@flowdesk/contracts';

/** Where the current definitions come from when the cache starts, or misses (workspace-api's internal API). */
export interface DefinitionSource {
  page(after: string | undefined): Promise<WorkflowDefinitionPage>;
  /** null: no such workflow. */
  get(workflowId: string): Promise<WorkflowDefinition | null>;
}

/**
 * The engine's copy of every workflow's definition, fed by workflow.changed events, so a run never
 * reads another service's data. Cold start: every definition once, in pages (load()). A miss (a
 * workflow created a moment ago whose event has not arrived yet) asks the source for that one
 * workflow; concurrent misses share one request, and a "no such workflow" is remembered for
 * `missTtlMs`. Versions: a definition is only ever replaced by a higher version, and a deletion leaves
 * a tombstone with its version, so an event delivered late or twice never brings back an older state.
 */
export class DefinitionCache {
  private readonly defs = new Map<string, WorkflowDefinition>();
  /** Owner → ids of their note- and entity-triggered workflows (what a change event may start). */
  private readonly changeTriggered = new Map<string, Set<string>>();
  private readonly deleted = new Map<string, number>();
  private readonly pending = new Map<string, Promise<WorkflowDefinition | null>>();
  private readonly absent = new Map<string, number>();
  private readonly missTtlMs: number;
  private readonly now: () => number;

  constructor(
    private readonly source: DefinitionSource,
    options: { missTtlMs?: number; now?: () => number } = {},
  ) {
    this.missTtlMs = options.missTtlMs ?? 1_000;
    this.now = options.now ?? Date.now;
  }

  /** Reads every current definition (the cold start). Events received meanwhile still win by version. */
  async load(): Promise<number> {
    let after: string | undefined;
    let count = 0;
    for (;;) {
      const page = await this.source.page(after);
      for (const def of page.items) this.put(def);
      count += page.items.length;
      if (!page.next) return count;
      after = page.next;
    }
  }

  /** Applies one workflow.changed event; false when the cache already had this version or a newer one. */
  apply(event: WorkflowChanged): boolean {
    if (event.definition) return this.put(event.definition);
    if (this.versionOf(event.workflowId) >= event.version) return false;
    this.index(this.defs.get(event.workflowId), undefined);
    this.defs.delete(event.workflowId);
    this.deleted.set(event.workflowId, event.version);
    return true;
  }

  private versionOf(id: string): number {
    return Math.max(this.defs.get(id)?.version ?? 0, this.deleted.get(id) ?? 0);
  }

  private put(def: WorkflowDefinition): boolean {
    if (this.versionOf(def.id) >= def.version) return false;
    this.index(this.defs.get(def.id), def);
    this.defs.set(def.id, def);
    this.deleted.delete(def.id);
    this.absent.delete(def.id);
    return true;
  }

  /** The definition, or null when the workflow does not exist (deleted, or never created). */
  async get(workflowId: string): Promise<WorkflowDefinition | null> {
    const hit = this.defs.get(workflowId);
    if (hit) return hit;
    if (this.deleted.has(workflowId)) return null;
    const missAt = this.absent.get(workflowId);
    if (missAt !== undefined && this.now() - missAt < this.missTtlMs) return null;
    let request = this.pending.get(workflowId);
    if (!request) {
      request = this.source
        .get(workflowId)
        .then((def) => {
          if (def) this.put(def);
          else this.absent.set(workflowId, this.now());
          return this.defs.get(workflowId) ?? null;
        })
        .finally(() => this.pending.delete(workflowId));
      this.pending.set(workflowId, request);
    }
    return request;
  }

  /** Reads the workflow from its owner now (the cache may lag its events) and keeps the newer of the two. */
  async refresh(workflowId: string): Promise<WorkflowDefinition | null> {
    const def = await this.source.get(workflowId);
    if (def) this.put(def);
    return this.defs.get(workflowId) ?? null;
  }

  private index(before: WorkflowDefinition | undefined, after: WorkflowDefinition | undefined): void {
    const isChange = (d: WorkflowDefinition | undefined) => d !== undefined && (d.triggerType === 'note' || d.triggerType === 'entity');
    if (isChange(before)) this.changeTriggered.get(before!.ownerId)?.delete(before!.id);
    if (isChange(after)) {
      let ids = this.changeTriggered.get(after!.ownerId);
      if (!ids) this.changeTriggered.set(after!.ownerId, (ids = new Set()));
      ids.add(after!.id);
    }
  }

  /** The owner's active note- and entity-triggered workflows. */
  changeTriggeredOf(ownerId: string): WorkflowDefinition[] {
    const ids = this.changeTriggered.get(ownerId);
    if (!ids) return [];
    return [...ids].map((id) => this.defs.get(id)).filter((d): d is WorkflowDefinition => d !== undefined && d.active);
  }

  /** Every cached definition (the scheduler's start). */
  all(): IterableIterator<WorkflowDefinition> {
    return this.defs.values();
  }

  get size(): number {
    return this.defs.size;
  }
}
