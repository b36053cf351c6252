/**
 * The app-server protocol types this binding uses, from the files `codex app-server
 * generate-ts` writes for the pinned release (`npm run codex-types` regenerates them).
 */
export type { InitializeParams } from "./protocol/InitializeParams.js";
export type { ServerNotification } from "./protocol/ServerNotification.js";
export type { ServerRequest } from "./protocol/ServerRequest.js";
export type { ThreadStartParams } from "./protocol/v2/ThreadStartParams.js";
export type { ThreadStartResponse } from "./protocol/v2/ThreadStartResponse.js";
export type { ThreadResumeParams } from "./protocol/v2/ThreadResumeParams.js";
export type { TurnStartParams } from "./protocol/v2/TurnStartParams.js";
export type { TurnStartResponse } from "./protocol/v2/TurnStartResponse.js";
export type { TurnInterruptParams } from "./protocol/v2/TurnInterruptParams.js";
export type { ThreadItem } from "./protocol/v2/ThreadItem.js";
export type { TurnError } from "./protocol/v2/TurnError.js";
export type { CodexErrorInfo } from "./protocol/v2/CodexErrorInfo.js";
export type { CommandExecutionRequestApprovalResponse } from "./protocol/v2/CommandExecutionRequestApprovalResponse.js";
export type { FileChangeRequestApprovalResponse } from "./protocol/v2/FileChangeRequestApprovalResponse.js";
export type { ThreadTokenUsage } from "./protocol/v2/ThreadTokenUsage.js";
