import { ERROR_BRANCH, HttpError, loopBodies, nodeDefinition, triggerConfigProblem, type TriggerType, type WorkflowGraph } from '@flowdesk/contracts';
import { templateExpressionProblem, templateStrings } from '@flowdesk/contracts/expressions';

/**
 * Checks what a JSON schema cannot: node ids are unique, edges join existing nodes, only nodes whose
 * type has branches (a condition, a switch) name one of its own, every node is reachable from the
 * trigger, there is no cycle (a run must end), and every `{{= … }}` expression compiles. The message
 * names the offending node, edge or field, for the editor and for an assistant.
 */
export function validateGraph(graph: WorkflowGraph): void {
  const fail = (msg: string): never => {
    throw new HttpError('validation_failed', `body.graph ${msg}`);
  };
  const nodes = new Map<string, WorkflowGraph['nodes'][number]>();
  graph.nodes.forEach((n, i) => {
    if (n.id === 'trigger') fail('uses the reserved node id "trigger" (edges start from it)');
    if (nodes.has(n.id)) fail(`has two nodes with id "${n.id}"`);
    nodes.set(n.id, n);
    // A Verify signature step is what lets a delivery without x-webhook-secret in (signatureGated): it cannot be skipped.
    if (n.disabled === true && n.type === 'verify_signature')
      fail(`node "${n.id}" is a Verify signature step, which cannot be disabled (it authenticates the deliveries): delete it instead`);
    for (const field of templateStrings(n.params)) {
      const problem = templateExpressionProblem(field.value);
      if (problem) throw new HttpError('validation_failed', `body.graph.nodes.${i}.params.${field.path} (node "${n.id}"): ${problem}`);
    }
  });
  const next = new Map<string, string[]>();
  const seen = new Set<string>();
  for (const e of graph.edges) {
    const key = `${e.from}->${e.to}:${e.branch ?? ''}`;
    if (seen.has(key)) fail(`has the edge ${e.from} -> ${e.to} twice`);
    seen.add(key);
    if (e.from !== 'trigger' && !nodes.has(e.from)) fail(`edge ${e.from} -> ${e.to} starts at an unknown node`);
    if (!nodes.has(e.to)) fail(`edge ${e.from} -> ${e.to} ends at an unknown node`);
    // A node type's branches come from its definition (libs/contracts/src/nodes): a condition's true/false.
    const from = e.from === 'trigger' ? undefined : nodeDefinition(nodes.get(e.from)!.type);
    const branches = from?.branches;
    if (e.branch === ERROR_BRANCH) {
      // The error path (nodes/define.ts, onError): only from a node that says to follow it.
      if (e.from === 'trigger' || nodes.get(e.from)!.onError !== 'branch')
        fail(`edge ${e.from} -> ${e.to} is an error branch but ${e.from} does not have onError "branch"`);
    } else {
      if (e.branch && !branches) fail(`edge ${e.from} -> ${e.to} has a branch but ${e.from} is not a condition or switch`);
      if (e.branch && !branches!.includes(e.branch))
        fail(
          `edge ${e.from} -> ${e.to} names branch "${e.branch}", which a ${from!.label.toLowerCase()} does not have (${branches!.map((b) => `"${b}"`).join(', ')})`,
        );
    }
    if (!e.branch && branches)
      fail(`edge ${e.from} -> ${e.to} leaves a ${from.label.toLowerCase()} without branch ${branches.map((b) => `"${b}"`).join(' or ')}`);
    next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  }
  // Depth-first from the trigger: grey = on the current path (a cycle if met again), black = done.
  const state = new Map<string, 'grey' | 'black'>();
  const visit = (id: string) => {
    state.set(id, 'grey');
    for (const to of next.get(id) ?? []) {
      if (state.get(to) === 'grey') fail(`has a cycle through node "${to}"`);
      if (!state.has(to)) visit(to);
    }
    state.set(id, 'black');
  };
  visit('trigger');
  for (const id of nodes.keys()) if (!state.has(id)) fail(`node "${id}" is not reachable from the trigger`);
  // A For each's loop body (its `each` branch) is closed: nothing enters it or leaves it but through the loop.
  const loops = loopBodies(graph);
  if (loops.problem) fail(loops.problem);
}

/**
 * A workflow's trigger settings (libs/contracts triggers.ts): settings that are given must be valid
 * for the trigger type (a schedule's cron and time zone, a note or entity filter, a form), and an active
 * schedule, entity or form workflow must have them — an active workflow that can never run is a mistake.
 */
export function validateTriggerConfig(type: TriggerType, config: Record<string, unknown>, active: boolean): void {
  if (Object.keys(config).length === 0 && !(active && (type === 'schedule' || type === 'entity' || type === 'form'))) return;
  const problem = triggerConfigProblem(type, config);
  if (problem) throw new HttpError('validation_failed', `body.${problem}`);
}
