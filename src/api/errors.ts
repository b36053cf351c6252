/** Every refusal: `error` for people, `code` for programs to branch on. */
export interface ErrorBody {
  error: string;
  code?: string;
  [detail: string]: unknown;
}

/** Codes this runtime answers with (SPEC "Errors" plus the ones the spec leaves to us). */
export const CODES = {
  threadNotFound: "thread-not-found",
  messageNotFound: "message-not-found",
  eventNotFound: "event-not-found",
  messageNotHeld: "message-not-held",
  threadArchived: "thread-archived",
  threadNotArchived: "thread-not-archived",
  notAToolResult: "not-a-tool-result",
  streamSubscribersFull: "stream-subscribers-full",
  bodyTooLarge: "body-too-large",
  blobStoreUnavailable: "blob-store-unavailable",
  spawnCwdRequired: "spawn-cwd-required",
  engineModelMismatch: "engine-model-mismatch",
  idempotencyConflict: "idempotency-conflict",
  noTurnRunning: "no-turn-running",
  approvalNotFound: "approval-not-found",
  approvalClosed: "approval-closed",
  questionNotFound: "question-not-found",
  questionClosed: "question-closed",
  threadDegraded: "thread-degraded",
  threadNotDegraded: "thread-not-degraded",
  forkSeqOutOfRange: "fork-seq-out-of-range",
  loopRunning: "loop-running",
  loopNotRunning: "loop-not-running",
  loopNotFound: "loop-not-found",
  internalOnly: "internal-only",
  engineUnavailable: "engine-unavailable",
  workspaceNotFound: "workspace-not-found",
  accountNotInRoster: "account-not-in-roster",
  modelNotAllowed: "model-not-allowed",
  headTaken: "head-taken",
  headNeedsWorkspace: "head-needs-workspace",
  notAHead: "not-a-head",
  unknownAccount: "unknown-account",
  accountProviderMismatch: "account-provider-mismatch",
  accountNotFound: "account-not-found",
  untrustedCaller: "untrusted-caller",
  accessTokenRateLimited: "access-token-rate-limited",
  credentialNotAvailable: "credential-not-available",
  credentialUnreachable: "credential-unreachable",
  accountPoolUnavailable: "account-pool-unavailable",
} as const;
