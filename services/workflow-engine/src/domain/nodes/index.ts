/**
 * The engine's half of the node registry (libs/contracts/src/nodes): one handler per node type,
 * registered by one line here. NodeHandlers is keyed by the registry's types, so a type without a
 * handler (or a handler for no type) does not compile; each handler is typed by its node's params.
 */
import type { NodeParams, NodeType } from '@flowdesk/contracts';
import { codeHandler } from './code.ts';
import { conditionHandler } from './condition.ts';
import { createTaskHandler } from './create-task.ts';
import { httpRequestHandler, type HttpNodeOptions } from './http-request.ts';
import type { NodeHandler } from './node-handler.ts';
import { setFieldsHandler } from './set-fields.ts';
import { switchHandler } from './switch.ts';
import { filterHandler } from './filter.ts';
import { stopHandler } from './stop.ts';
import { verifySignatureHandler } from './verify-signature.ts';
import { waitHandler } from './wait.ts';
import { runWorkflowHandler } from './run-workflow.ts';
import { sendEmailHandler } from './send-email.ts';
import { slackHandler, type SlackNodeOptions } from './slack.ts';
import { discordHandler } from './discord.ts';
import { teamsHandler } from './teams.ts';
import { telegramHandler, type TelegramNodeOptions } from './telegram.ts';
import { aiHandler } from './ai.ts';
import { respondHandler } from './respond.ts';
import { forEachHandler } from './for-each.ts';
import { aggregateHandler } from './aggregate.ts';
import { updateTaskHandler } from './update-task.ts';
import { findTasksHandler } from './find-tasks.ts';
import { getProjectHandler } from './get-project.ts';
import { getTaskHandler } from './get-task.ts';
import { addCommentHandler, createCalendarEntryHandler, createNoteHandler } from './workspace-creates.ts';

// The rendered input is each handler's own business; the executor only passes it from render to execute.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type NodeHandlers = { [T in NodeType]: NodeHandler<NodeParams<T>, any> };

export interface NodeHandlerOptions {
  httpNode?: Partial<HttpNodeOptions>;
  /** Tests only: the Slack node's Web API on loopback. */
  slackNode?: Partial<SlackNodeOptions>;
  /** Tests only: the Telegram node's Bot API on loopback. */
  telegramNode?: Partial<TelegramNodeOptions>;
}

export function nodeHandlers(options: NodeHandlerOptions = {}): NodeHandlers {
  return {
    http_request: httpRequestHandler(options.httpNode),
    send_email: sendEmailHandler,
    slack: slackHandler(options.slackNode),
    discord: discordHandler,
    teams: teamsHandler,
    telegram: telegramHandler(options.telegramNode),
    ai: aiHandler,
    create_task: createTaskHandler,
    update_task: updateTaskHandler,
    find_tasks: findTasksHandler,
    get_task: getTaskHandler,
    get_project: getProjectHandler,
    create_note: createNoteHandler,
    create_calendar_entry: createCalendarEntryHandler,
    add_comment: addCommentHandler,
    condition: conditionHandler,
    set_fields: setFieldsHandler,
    code: codeHandler,
    switch: switchHandler,
    filter: filterHandler,
    for_each: forEachHandler,
    aggregate: aggregateHandler,
    stop: stopHandler,
    verify_signature: verifySignatureHandler,
    wait: waitHandler,
    run_workflow: runWorkflowHandler,
    respond: respondHandler,
  };
}
