/**
 * The app-server protocol types this binding uses, from the files `codex app-server
 * generate-ts` writes for the pinned release (`npm run codex-types` regenerates them).
 * An upgrade of the pinned CLI that renames a method or a field this binding uses fails
 * the type check here, in rpc.ts or in turn.ts.
 */
import type { ClientNotification } from "./protocol/ClientNotification.js";
import type { ClientRequest } from "./protocol/ClientRequest.js";
import type { InitializeResponse } from "./protocol/InitializeResponse.js";
import type { ServerRequest } from "./protocol/ServerRequest.js";
import type { CommandExecutionRequestApprovalResponse } from "./protocol/v2/CommandExecutionRequestApprovalResponse.js";
import type { FileChangeRequestApprovalResponse } from "./protocol/v2/FileChangeRequestApprovalResponse.js";
import type { ThreadCompactStartResponse } from "./protocol/v2/ThreadCompactStartResponse.js";
import type { ThreadResumeResponse } from "./protocol/v2/ThreadResumeResponse.js";
import type { ThreadStartResponse } from "./protocol/v2/ThreadStartResponse.js";
import type { ToolRequestUserInputResponse } from "./protocol/v2/ToolRequestUserInputResponse.js";
import type { TurnInterruptResponse } from "./protocol/v2/TurnInterruptResponse.js";
import type { TurnStartResponse } from "./protocol/v2/TurnStartResponse.js";
import type { TurnSteerResponse } from "./protocol/v2/TurnSteerResponse.js";

export type { ClientNotification, ServerRequest };
export type { ServerNotification } from "./protocol/ServerNotification.js";
export type { ThreadItem } from "./protocol/v2/ThreadItem.js";
export type { TurnError } from "./protocol/v2/TurnError.js";
export type { CodexErrorInfo } from "./protocol/v2/CodexErrorInfo.js";
export type { ToolRequestUserInputParams } from "./protocol/v2/ToolRequestUserInputParams.js";
export type { ToolRequestUserInputResponse };
export type { RequestId } from "./protocol/RequestId.js";

/**
 * What each request this binding sends answers. The generated protocol types a request's
 * params by its method but names its result only by type, so the pairs are written here.
 * A key that is no longer a method of the pinned protocol has `never` params (`ParamsOf`),
 * and its call fails the type check.
 */
export interface Responses {
  initialize: InitializeResponse;
  "thread/start": ThreadStartResponse;
  "thread/resume": ThreadResumeResponse;
  "thread/compact/start": ThreadCompactStartResponse;
  "turn/start": TurnStartResponse;
  "turn/interrupt": TurnInterruptResponse;
  "turn/steer": TurnSteerResponse;
}

/** What this binding answers to each server request it takes. */
export interface ServerResponses {
  "item/commandExecution/requestApproval": CommandExecutionRequestApprovalResponse;
  "item/fileChange/requestApproval": FileChangeRequestApprovalResponse;
  "item/tool/requestUserInput": ToolRequestUserInputResponse;
}

export type RequestMethod = keyof Responses;
export type ParamsOf<M extends RequestMethod> = Extract<ClientRequest, { method: M }>["params"];
