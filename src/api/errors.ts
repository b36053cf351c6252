/** Every refusal: `error` for people, `code` for programs to branch on. */
export interface ErrorBody {
  error: string;
  code?: string;
  [detail: string]: unknown;
}

/** Codes this runtime answers with (SPEC "Errors" plus the ones the spec leaves to us). */
export const CODES = {
  /** A body that is not JSON, nests too deep, or does not fit its route's schema; an unknown key names the keys the route takes. */
  invalidBody: "invalid-body",
  /** A query value that does not fit its route: a bad limit, cursor or time, or an unknown key. */
  invalidQuery: "invalid-query",
  /** A path segment that names nothing this route could hold (a seq that is no number, a name with characters names cannot have). */
  invalidParam: "invalid-param",
  /** A request header of the wrong shape (`Idempotency-Key` longer than 200 characters). */
  invalidHeader: "invalid-header",
  /** A log cursor (`after`) past the last event: the caller's position is ahead of the thread's log. */
  cursorBeyondEnd: "cursor-beyond-end",
  /** A path no route serves (404). */
  routeNotFound: "route-not-found",
  /** A message with no text (or only spaces) and no attachment: nothing for a turn to answer. */
  messageEmpty: "message-empty",
  /** A new thread's id that already names a thread: ids are random, so only a bug makes one (409). */
  threadExists: "thread-exists",
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
  /** `POST /threads/:id/agui` with no new user message and no resume entry: nothing to run. */
  aguiNothingToRun: "agui-nothing-to-run",
  /** A `resume` entry of `POST /threads/:id/agui` names no approval or question open on the thread. */
  aguiInterruptClosed: "agui-interrupt-closed",
  /** A `resume` entry's payload is not what its interrupt's `responseSchema` asks for. */
  aguiResumeInvalid: "agui-resume-invalid",
  /** A new AG-UI message with no text (only images or other parts, which the AG-UI route does not take). */
  aguiMessageUnsupported: "agui-message-unsupported",
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
  /** A route only programs on this machine may call (`localOnly` in the contract) was called with a Host that is not a loopback name, or from a browser (403). */
  callerNotLocal: "caller-not-local",
  /** `DELETE /accounts/:id/model-refusals/:model`: the account holds no refusal of that model (404). */
  modelRefusalNotFound: "model-refusal-not-found",
  methodNotAllowed: "method-not-allowed",
  accessTokenRateLimited: "access-token-rate-limited",
  credentialNotAvailable: "credential-not-available",
  credentialUnreachable: "credential-unreachable",
  accountPoolUnavailable: "account-pool-unavailable",
  engineHostUnavailable: "engine-host-unavailable",
  draining: "draining",
  drainClaimed: "drain-claimed",
  drainNotClaimed: "drain-not-claimed",
  spawnsPaused: "spawns-paused",
  sessionCap: "session-cap",
  threadListRateLimited: "thread-list-rate-limited",
  attentionNotFound: "attention-not-found",
  turnNotIdle: "turn-not-idle",
  recordOnlyThread: "record-only-thread",
  peerExists: "peer-exists",
  peerNotFound: "peer-not-found",
  previewNotFound: "preview-not-found",
  /** A handoff's summary that no curator model wrote (`context: "summary"`). */
  summaryUnavailable: "summary-unavailable",
  /** `POST /threads/:id/ui/generate`: the model wrote a tree the catalog refuses, asked again and did again (502); nothing stored. */
  uiModelInvalid: "ui-model-invalid",
  /** `POST /threads/:id/ui/generate`: the interface model could not be asked, or wrote nothing (503); nothing stored. */
  uiModelUnavailable: "ui-model-unavailable",
  /** `POST /threads/:id/ui/generate` with `source: "model"` while `SERVICE_UI_MODEL` names none (409). */
  uiModelNotConfigured: "ui-model-not-configured",
  /** `POST /threads/:id/compact` with `mode: "summary"` on engine_a or engine_b while a turn runs in the session it would compact. */
  engineBusy: "engine-busy",
  /** A message with `onBusy: "reject"` while a turn runs. */
  threadBusy: "thread-busy",
  /** A message's attachment over `SERVICE_ATTACHMENT_MAX_BYTES` (413); carries `limit` and `index`. */
  attachmentTooLarge: "attachment-too-large",
  /** A message's attachment whose base64 is not, or whose name another of its attachments has. */
  attachmentInvalid: "attachment-invalid",
  /** `GET /threads/:id/attachments/:sha256` names no attachment of the thread. */
  attachmentNotFound: "attachment-not-found",
  /** A second outcome for an operation that has one (SPEC). */
  operationSettled: "operation-settled",
  operationNotFound: "operation-not-found",
  subscriptionNotFound: "subscription-not-found",
  /** The watched thread could not be told of a new subscription; nothing was kept. */
  watchFailed: "watch-failed",
  /** `POST /threads/:id/merge` for a thread that is not this thread's child. */
  notAChild: "not-a-child",
  /** A merge where the parent or the child has no working directory (`cwd`), or it is not a git checkout. */
  noCheckout: "no-checkout",
  /** A merge git could not make without a person: the parent's checkout is left as it was; carries `files`. */
  mergeConflict: "merge-conflict",
  /** A merge git would not make: a merge in progress in the checkout, local changes in the way, a commit it could not fetch. */
  mergeFailed: "merge-failed",
  /** A subscription naming a thread that does not exist (or the subscriber itself). */
  watchTargetNotFound: "watch-target-not-found",
  /** `POST /threads/:id/compact` while a delegation is open: a cut waits until the child's result has joined (WindowBlocked). */
  windowBlocked: "window-blocked",
  /** `POST /threads/:id/seats` with a name the thread has (active or removed: a seat keeps its name). */
  seatExists: "seat-exists",
  /** A seat the thread never had (a message's `seat`, a replace, a removal, a handoff's `to`). */
  seatNotFound: "seat-not-found",
  /** A seat that was removed: it keeps its history and its name, and takes nothing more. */
  seatRemoved: "seat-removed",
  /** Removing the thread's last active seat. */
  lastSeat: "last-seat",
  /** A handoff to the seat that already holds the thread. */
  seatHoldsThread: "seat-holds-thread",
  /** `send`'s 202 for a message whose seat is placed on a peer: no turn here answers it (`queuedBecause.code`). */
  seatElsewhere: "seat-elsewhere",
  /** A handoff while another offer is pending (one at a time). */
  handoffPending: "handoff-pending",
  handoffNotFound: "handoff-not-found",
  /** No registered code root of that name (`GET /code/roots` lists them). */
  codeRootNotFound: "code-root-not-found",
  /** A code path that is absolute, holds `..`, or leads out of its root through a link. */
  codePathFenced: "code-path-fenced",
  codePathNotFound: "code-path-not-found",
  /** A file of a root the front may not read (403). */
  codePathDenied: "code-path-denied",
  /** A file system failure that is nobody's mistake (500, with its errno). */
  codeReadFailed: "code-read-failed",
  /** A search that ran past its minute (504). */
  codeSearchTimeout: "code-search-timeout",
  /** ripgrep is missing (its platform package did not install): 503. */
  codeSearchUnavailable: "code-search-unavailable",
  /** git could not answer for a root's checkout (a foreign owner, a timeout): nothing is read past it (503). */
  codeGitFailed: "code-git-failed",
  /** A glob the code service does not take (nested braces, more than 64 alternatives). */
  codeGlobInvalid: "code-glob-invalid",
  /** A file tree-sitter could not parse at all. */
  codeParseFailed: "code-parse-failed",
  codePathNotFile: "code-path-not-file",
  /** A file over the size a read or an outline takes (413). */
  codeFileTooLarge: "code-file-too-large",
  /** A read of a file that holds NUL bytes (415). */
  codeFileBinary: "code-file-binary",
  /** An outline of a language no grammar reads (415). */
  codeLanguageUnknown: "code-language-unknown",
  /** A read range outside the file. */
  codeRangeOutside: "code-range-outside",
  /** A read whose `end` comes before its `start`. */
  codeRangeReversed: "code-range-reversed",
  /** A root that is no git checkout: no tracked files to list. */
  codeRootNotGit: "code-root-not-git",
  /** A search pattern ripgrep refuses (a bad regular expression, a bad glob). */
  codeSearchInvalid: "code-search-invalid",
  /** The code host has no such repository or pull request, or hides it from the runtime's token. */
  codeHostNotFound: "code-host-not-found",
  /** The code host refused the runtime's token (401): the code-host account in accounts.json needs a new one. */
  codeHostCredentials: "code-host-credentials",
  /** The code host took the runtime's token but does not let it do this (a 403 that is no rate limit): the account's token needs more access. */
  codeHostForbidden: "code-host-forbidden",
  /** The code host's rate limit; `Retry-After` says when to try again. */
  codeHostRateLimited: "code-host-rate-limited",
  /** No code-host account serves the repository's owner, and no simulator stands in. */
  codeHostUnavailable: "code-host-unavailable",
  /** The code host failed or could not be reached. */
  codeHostFailed: "code-host-failed",
  /** The code host does not let the account approve, or request changes on, a pull request it opened: finalize a `comment` decision, or post with another account. */
  reviewOwnPullRequest: "review-own-pull-request",
  /** The runtime could not fetch a pull request's commits into its mirror of the repository (docs/code-host.md, "Getting the code"). */
  gitFetchFailed: "git-fetch-failed",
  /** No runtime-owned worktree of that id (`POST /git/worktrees` makes one). */
  worktreeNotFound: "worktree-not-found",
  /** A worktree of that id exists in the other mode (review or build): one id, one mode. */
  worktreeModeMismatch: "worktree-mode-mismatch",
  /** No code service behind the CODE binding (plain `wrangler dev`), or it could not be reached. */
  codeServiceUnavailable: "code-service-unavailable",
  /** A `cwd` no session may work in: `/`, inside the data directory or the engine state, or holding the runtime's checkout, node_modules or Node; or a build thread's inside a registered checkout (build threads work in worktrees of their own). */
  spawnCwdFenced: "spawn-cwd-fenced",
  /** Something that runs only inside the sandbox (a merge's git) while the sandbox is unavailable (503; the sentence says why and what to install). */
  sandboxUnavailable: "sandbox-unavailable",
  /** A retain naming a thread of another workspace. */
  workspaceMismatch: "workspace-mismatch",
  /** A memory the workspace does not have (a retain's `supersedes`, an edit, a forget). */
  memoryNotFound: "memory-not-found",
  /** A retain whose text is over the size a memory holds (413); raises the memory alert. */
  memoryTooLarge: "memory-too-large",
  /** A retain the workspace's storage could not take (503); raises the memory alert. */
  memoryStoreFailed: "memory-store-failed",
  /** A retain of the text of a memory that was retired (corrected, or by a person): it is not brought back beside its correction. */
  memoryRetired: "memory-retired",
  /** An edit that would give a memory the text, or the key, another active memory holds. */
  memoryDuplicate: "memory-duplicate",
  /** `reflect` when no curator model answered with usable reflections. */
  reflectUnavailable: "reflect-unavailable",
  /** A runtime tool call from a turn that is not the thread's running one (it ended, or the token outlived it). */
  turnNotRunning: "turn-not-running",
  /** A model's `subscribe` of a thread outside its family (its children, the thread that delegated to it), or of a workspace. */
  watchOutOfScope: "watch-out-of-scope",
  /** A model's `delegate` whose child did not take the prompt: the operation settled `failed`. */
  delegationFailed: "delegation-failed",
  /** A model's `delegate` from a thread `MAX_TOOL_DELEGATION_DEPTH` parents deep. */
  delegationTooDeep: "delegation-too-deep",
  /** `offer_handoff` from a seat that does not hold the thread. */
  seatNotHolder: "seat-not-holder",
  /** `report_milestone` or `report_outcome` from a thread that answers no delegation. */
  notDelegated: "not-delegated",
  /** Accepting or declining an offer already accepted, declined or cancelled. */
  handoffClosed: "handoff-closed",
  /** The front has not measured the machine yet (`GET /host/load`). */
  hostLoadUnknown: "host-load-unknown",
  /**
   * No model of that id in the catalog: the account pool's `/models/:id`, and, while the
   * simulator stands in for the providers, a spawn, seat, fork, fallback or policy default
   * naming a model it does not serve (400, with `models`, the ids it serves).
   */
  modelNotFound: "model-not-found",
  /**
   * The data volume is full (SQLite's SQLITE_FULL, the kernel's ENOSPC): the write was refused and
   * nothing of it kept (507, with `Retry-After` and `reason`). Writing resumes by itself once space returns.
   */
  storageFull: "storage-full",
  /** No review room of that id (404). */
  roomNotFound: "room-not-found",
  /** A round asked of a room whose thread and reviewer seat are not in place yet (409; arm it again). */
  roomNotArmed: "room-not-armed",
  /** A round asked while another round of the room runs (409, with `n`). */
  roundRunning: "round-running",
  /** A round asked while the reviewer's thread runs a turn or has messages queued (409, with `threadId`). */
  reviewerBusy: "reviewer-busy",
  /** No round `n` in the room (404). */
  roundNotFound: "round-not-found",
  /** Finalize of a round with no verdict: running or failed (409, with `state`). */
  verdictNotReady: "verdict-not-ready",
  /** Finalize of a round a newer round replaced (409, with `newest`). */
  roundSuperseded: "round-superseded",
  /** Finalize of a round whose head is no longer the pull request's (409, with `head` and `roundHead`). */
  roundStale: "round-stale",
  /** Finalize of a round while another finalize of the room posts (409): ask again when it answers. */
  roundFinalizing: "round-finalizing",
  /** `submit_verdict` from a room thread with no round running (409): nothing asked for a verdict. */
  noRoundRunning: "no-round-running",
  /** A build thread for a pull request whose build threads already fill the build seat limit (409, with `limit` and `threads`). */
  buildSeatsFull: "build-seats-full",
  /** A bug: the router caught an error nobody refused on purpose (500). */
  internal: "internal",
  /** A bug in one of the front's bindings (the engine host, the code service, the account pool, the tool server): an error it refused on nobody's account (500). */
  bindingFailed: "binding-failed",
  /** The engine host's answer to the worker's steer of a turn that cannot take a message now (the Thread records the steer as not taken). */
  steerNotTaken: "steer-not-taken",
  /** From the front: the workerd process that holds the request's thread closed the connection without answering. */
  upstreamUnavailable: "upstream-unavailable",
  /** From the front (400): a request whose framing it refuses before workerd sees it (docs/operating.md "What the front refuses"). */
  badRequestFraming: "bad-request-framing",
  /** From the front (431): a request head over 64 KiB. */
  headTooLarge: "head-too-large",
  /** From the front (501): a method no route uses. */
  methodNotImplemented: "method-not-implemented",
  /** From the front (408): a head not whole in time, or a request body that stalled. */
  requestTimeout: "request-timeout",
} as const;

/**
 * The credential proxy's answers to a session's own calls (docs/credentials.md), in the
 * provider-like shape the engines' SDKs read: `{error: {type: "proxy_error", code,
 * message}, type: "error"}`, with the code in `x-service-proxy` too. No route answers them.
 */
export const PROXY_CODES = {
  /** A placeholder naming an account this host does not have (401). */
  unknownAccount: "unknown-account",
  /** A placeholder on its way anywhere but its own account's origin (403). */
  wrongDestination: "wrong-destination",
  /** The provider refused the account's login when the proxy renewed it (401). */
  loginRefused: "login-refused",
  /** The provider, or its token endpoint, could not be reached (502). */
  upstreamUnreachable: "proxy-upstream-unreachable",
  /** A destination that is neither loopback nor a provider (403): the session reached outside. */
  egressRefused: "egress-refused",
  /** A plain-HTTP proxy request whose target is not an absolute URI (400). */
  absoluteUriRequired: "absolute-uri-required",
  /** A bug in the proxy: an error nobody refused on purpose (502, so the engine sees a failed call). */
  proxyFailed: "proxy-error",
} as const;
