/**
 * A workflow as a file and back (docs/workflow-export.md; the format is libs/contracts
 * WorkflowExport). Export masks inline secrets and names credentials; import reads a file leniently,
 * step by step: a step of a type this server does not know is left out (with the steps reached only
 * through it) and said so; a malformed or hostile file is refused with its reasons (400), nothing saved.
 */
import {
  credentialNames,
  HttpError,
  maskGraphSecrets,
  NODE_SCHEMAS,
  NODE_TYPES,
  SECRET_MASK,
  WORKFLOW_EXPORT_FORMAT,
  WORKFLOW_EXPORT_FORMAT_VERSION,
  type CreateWorkflow,
  type WorkflowCredentialUse,
  type WorkflowExport,
  type WorkflowGraph,
  type WorkflowImportBody,
  type WorkflowImportProblem,
} from '@flowdesk/contracts';
import { Check, Errors } from 'typebox/value';
import type { Workflow as WorkflowRow } from '../generated/prisma/client.ts';
import { definitionOf } from './versions.ts';
import { validateGraph, validateTriggerConfig } from './graph.ts';

/** The credentials a graph's steps name, each with the steps naming it, in the order first named. */
export function credentialUses(graph: { nodes: readonly { id: string }[] }): WorkflowCredentialUse[] {
  const uses = new Map<string, string[]>();
  for (const node of graph.nodes) for (const name of credentialNames({ nodes: [node] })) uses.set(name, [...(uses.get(name) ?? []), node.id]);
  return [...uses].map(([name, nodeIds]) => ({ name, nodeIds }));
}

/** The file of a workflow: its definition with inline secrets masked, its pinned sample, its credentials by name. */
export function toExport(row: WorkflowRow, now: Date): WorkflowExport {
  const { graph, ...definition } = definitionOf(row);
  const masked = maskGraphSecrets(graph);
  return {
    format: WORKFLOW_EXPORT_FORMAT,
    formatVersion: WORKFLOW_EXPORT_FORMAT_VERSION,
    exportedAt: now.toISOString(),
    workflow: {
      ...definition,
      ...(row.tags.length ? { tags: row.tags } : {}),
      graph: masked,
      samplePayload: (row.samplePayload as Record<string, unknown> | null) ?? null,
    },
    credentials: credentialUses(masked),
  };
}

/** What an import creates (a CreateWorkflow, never active), and what it could not take as it was. */
export interface ReadImport {
  create: CreateWorkflow & { active: false };
  samplePayload: Record<string, unknown> | null;
  problems: WorkflowImportProblem[];
  credentials: WorkflowCredentialUse[];
}

const schemaOf = new Map<string, (typeof NODE_SCHEMAS)[number]>(NODE_TYPES.map((d, i) => [d.type, NODE_SCHEMAS[i]!]));
const refuse = (reasons: string[]): never => {
  throw new HttpError('validation_failed', `The file cannot be imported: ${reasons.join('; ')}`);
};

/**
 * Reads an import's body (already of WorkflowImportBody's shape: sizes and field types are the
 * route's schema's). Refuses (400, every reason found) a file of another format or format version,
 * a step of a known type that does not match it, a graph that is not one (validateGraph, after the
 * left-out steps), trigger settings that are not valid. `errorWorkflowExists` says whether the
 * importer has the error workflow the file names. `leftOut`: steps to leave out as if of an unknown
 * type, with the reason to say (an n8n node that could not be mapped: n8n-import.ts).
 */
export function readImport(body: WorkflowImportBody, errorWorkflowExists: boolean, leftOut: ReadonlyMap<string, string> = new Map()): ReadImport {
  if (body.format !== WORKFLOW_EXPORT_FORMAT) refuse([`format is "${body.format}", not "${WORKFLOW_EXPORT_FORMAT}" (a Flowdesk workflow file)`]);
  if (body.formatVersion !== WORKFLOW_EXPORT_FORMAT_VERSION)
    refuse([`formatVersion ${body.formatVersion} is not one this server reads (it reads ${WORKFLOW_EXPORT_FORMAT_VERSION})`]);
  const wf = body.workflow;
  const problems: WorkflowImportProblem[] = [];
  const reasons: string[] = [];
  const unknown = new Set<string>();
  wf.graph.nodes.forEach((node, i) => {
    const reason = leftOut.get(node.id);
    if (reason !== undefined) {
      unknown.add(node.id);
      problems.push({ nodeId: node.id, kind: 'left_out', message: reason });
      return;
    }
    const schema = schemaOf.get(node.type);
    if (!schema) {
      unknown.add(node.id);
      problems.push({ nodeId: node.id, kind: 'left_out', message: `step "${node.id}" is of type "${node.type}", which this server does not have: left out` });
      return;
    }
    if (!Check(schema, node)) {
      const first = [...Errors(schema, node)][0];
      reasons.push(
        `workflow.graph.nodes.${i}${first?.instancePath.replaceAll('/', '.') ?? ''} (step "${node.id}") ${first?.message ?? 'does not match its type'}`,
      );
    }
  });
  if (reasons.length > 0) refuse(reasons);

  // Steps reached only through a left-out step go too (every step must be reachable from the trigger);
  // a step the file's own graph never reaches is the graph's fault, refused below by validateGraph.
  const reachable = (edges: typeof wf.graph.edges, skip: Set<string>) => {
    const seen = new Set<string>(['trigger']);
    const queue = ['trigger'];
    while (queue.length > 0) {
      const at = queue.shift()!;
      for (const e of edges) if (e.from === at && !skip.has(e.to) && !seen.has(e.to)) queue.push((seen.add(e.to), e.to));
    }
    return seen;
  };
  const before = reachable(wf.graph.edges, new Set());
  const after = reachable(wf.graph.edges, unknown);
  const dropped = new Set(unknown);
  for (const node of wf.graph.nodes) {
    if (dropped.has(node.id) || !before.has(node.id) || after.has(node.id)) continue;
    dropped.add(node.id);
    problems.push({ nodeId: node.id, kind: 'left_out', message: `step "${node.id}" was reached only through a step left out: left out` });
  }
  const graph = {
    ...wf.graph,
    nodes: wf.graph.nodes.filter((n) => !dropped.has(n.id)),
    edges: wf.graph.edges.filter((e) => !dropped.has(e.from) && !dropped.has(e.to)),
  } as WorkflowGraph;
  try {
    validateGraph(graph);
    validateTriggerConfig(wf.triggerType, wf.triggerConfig, false);
  } catch (err) {
    if (err instanceof HttpError) refuse([err.message.replace(/^body\./, 'workflow.')]);
    throw err;
  }

  for (const node of graph.nodes) {
    if (JSON.stringify(node).includes(SECRET_MASK))
      problems.push({
        nodeId: node.id,
        kind: 'needs_attention',
        message: `step "${node.id}" holds a secret masked by the export (${SECRET_MASK}): type it again, or better, keep it in a credential`,
      });
  }
  let errorWorkflowId = wf.errorWorkflowId;
  if (errorWorkflowId && !errorWorkflowExists) {
    problems.push({ nodeId: null, kind: 'left_out', message: `the error workflow ${errorWorkflowId} is not one of yours: the new workflow has none` });
    errorWorkflowId = null;
  }
  return {
    create: {
      name: wf.name,
      description: wf.description,
      ...(wf.tags ? { tags: wf.tags } : {}),
      triggerType: wf.triggerType,
      active: false,
      graph,
      triggerConfig: wf.triggerConfig,
      requireWebhookSecret: wf.requireWebhookSecret,
      executionOrder: wf.executionOrder,
      errorWorkflowId,
      retention: wf.retention,
    },
    samplePayload: wf.samplePayload,
    problems,
    credentials: credentialUses(graph),
  };
}
