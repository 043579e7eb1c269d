import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Compile } from 'typebox/compile';
import { allows, insufficientScopeMessage, parseScopes, CreateTask, TriggerEvent, WorkflowGraph, HttpError } from '../src/index.ts';

test('mcp:write includes reads; mcp:read allows reads only; unknown scopes grant nothing', () => {
  assert.equal(allows('mcp:read', 'read'), true);
  assert.equal(allows('mcp:read', 'write'), false);
  assert.equal(allows('mcp:write', 'read'), true);
  assert.equal(allows('mcp:write', 'write'), true);
  assert.equal(allows('mcp:read mcp:write', 'write'), true);
  assert.equal(allows('admin openid', 'read'), false);
  assert.equal(allows('', 'read'), false);
  assert.equal(allows(undefined, 'read'), false);
  assert.deepEqual(parseScopes(' mcp:read  other mcp:write '), ['mcp:read', 'mcp:write']);
});

test('the 403 message names the missing scope and the remedy', () => {
  const m = insufficientScopeMessage('write');
  assert.match(m, /requires the mcp:write scope/);
  assert.match(m, /Read \+ Write/);
  const e = new HttpError('forbidden', m);
  assert.equal(e.statusCode, 403);
  assert.deepEqual(e.toBody(), { error: 'forbidden', message: m });
});

test('schemas are plain JSON Schema usable outside fastify (the MCP catalogue and events reuse them)', () => {
  const task = Compile(CreateTask);
  assert.equal(task.Check({ title: 'x', dueDate: '2026-01-31', tags: ['a'] }), true);
  assert.equal(task.Check({ title: 'x', extra: 1 }), false);
  assert.equal(task.Check({ title: '' }), false);
  const ev = Compile(TriggerEvent);
  const event = {
    eventId: 'e1',
    workflowId: '3f1c1d2e-0a4b-4c5d-8e9f-0a1b2c3d4e5f',
    ownerId: '3f1c1d2e-0a4b-4c5d-8e9f-0a1b2c3d4e5f',
    source: 'webhook',
    receivedAt: '2026-11-22T10:00:00Z',
    payload: { a: { b: 1 } },
    headers: { 'content-type': 'application/json' },
  };
  assert.equal(ev.Check(event), true);
  assert.equal(ev.Check({ ...event, source: 'email' }), false);
  const graph = Compile(WorkflowGraph);
  assert.equal(
    graph.Check({ nodes: [{ id: 'n1', type: 'http_request', params: { method: 'GET', url: 'https://x' } }], edges: [{ from: 'trigger', to: 'n1' }] }),
    true,
  );
  assert.equal(graph.Check({ nodes: [{ id: 'n1', type: 'http_request', params: { method: 'TRACE', url: 'https://x' } }], edges: [] }), false);
  assert.equal(JSON.parse(JSON.stringify(CreateTask)).properties.status.enum.includes('done'), true);
});
