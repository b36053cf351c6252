import type { PullSummary } from "../api/code-host.js";
import { CODES } from "../api/errors.js";
import type { Outcome } from "../api/outcome.js";
import {
  DEFAULT_REVIEWER_SEAT,
  roomKey,
  type ArmRoom,
  type Capabilities,
  type EarlierFinding,
  type Finding,
  type LinesAnswer,
  type PostedReview,
  type ReviewContext,
  type Room,
  type RoomCore,
  type Round,
  type StartRound,
  type SubmitVerdictInput,
  type Verdict,
  type Worktree,
} from "../api/rooms.js";
import type { SeatList } from "../api/seats.js";
import type { MessageAccepted, ThreadRow } from "../api/threads.js";
import type { ToolTurn } from "../api/tools.js";
import type { TurnStatus } from "../api/turns.js";
import { refused, valueOf } from "../http/answer.js";
import { callCode } from "../platform/code-call.js";
import type { RuntimeConfig } from "../platform/config.js";
import type { Env } from "../platform/env.js";
import { roomOf, threadOf, workspaceOf } from "../platform/stubs.js";
import { fingerprintOf } from "../rules/finding-fingerprint.js";
import { reviewPrompt } from "../rules/review-prompt.js";
import { newId } from "../shared/ids.js";
import { createThread } from "./create-thread.js";
import { seatTarget } from "./seat-target.js";

/** A room id as `newRoomId` makes it: anything else names no room, and no object is made for it. */
const ROOM_ID = /^room_[0-9a-hjkmnp-tv-z]{16}$/;

export const newRoomId = () => newId("room_");

const pullPath = (repo: string, pr: number) => `/github/${repo}/prs/${pr}`;

/** The pull request as the code host has it now; a 404 is `code-host-not-found`. */
export async function pullOf(env: Env, repo: string, pr: number): Promise<PullSummary> {
  return valueOf(await callCode<PullSummary>(env, "GET", pullPath(repo, pr)));
}

/** Fetches the pull request into the runtime's mirror and puts worktree `id` at its head. */
export async function worktreeAt(env: Env, repo: string, pr: number, id: string, mode: "review" | "build"): Promise<Worktree> {
  return valueOf(await callCode<Worktree>(env, "POST", "/git/worktrees", { repo, pr, id, mode }));
}

/** The room's object, once it is known to exist. */
async function existingRoom(env: Env, id: string) {
  if (!ROOM_ID.test(id)) refused(404, `no room ${id}`, CODES.roomNotFound);
  const stub = roomOf(env, id);
  const core = (await stub.info()) as RoomCore | null;
  if (!core) refused(404, `no room ${id}`, CODES.roomNotFound);
  return { stub, core };
}

/** The room as the routes show it: its core and the seats of its thread. */
async function shown(env: Env, core: RoomCore): Promise<Room> {
  const { armingSince: _, ...room } = core;
  if (!core.threadId) return { ...room, seats: [] };
  const list = (await threadOf(env, core.threadId).seatList()) as Outcome<SeatList>;
  const seats = list.ok ? list.value.seats.filter((s) => s.state === "active").map((s) => ({ name: s.name, engine: s.engine, model: s.model, role: s.role })) : [];
  return { ...room, seats };
}

export async function roomView(env: Env, id: string): Promise<Room> {
  return shown(env, (await existingRoom(env, id)).core);
}

/**
 * `POST /workspaces/:name/rooms`: the pull request's room, armed now (`created`) or
 * adopted by its key. The first arm makes the room's worktree, its thread and its reviewer
 * seat; an arm that died midway is taken over by the next one.
 */
export async function armRoom(env: Env, config: RuntimeConfig, workspace: string, body: ArmRoom): Promise<{ room: Room; created: boolean }> {
  const pull = await pullOf(env, body.repo, body.pr);
  const key = roomKey(workspace, body.repo, body.pr);
  const claim = await workspaceOf(env, workspace).claimRoom(key, newRoomId());
  const stub = roomOf(env, claim.id);
  const armed = await stub.arm({ id: claim.id, key, workspace, repo: body.repo, pr: body.pr, reviewerSeat: body.seat ?? DEFAULT_REVIEWER_SEAT, createdAt: new Date().toISOString() });
  if (!armed.takeOver) return { room: await shown(env, armed.room as RoomCore), created: false };
  const token = armed.token!;
  // The room's seat is the one it was made with: an arm that takes over a failed one makes that seat.
  const seat = (armed.room as RoomCore).reviewerSeat;
  let threadId: string | null = null;
  let done: RoomCore | null = null;
  try {
    const tree = await worktreeAt(env, body.repo, body.pr, claim.id, "review");
    ({ threadId } = await createThread(
      env,
      config,
      {
        workspace,
        title: `Review of ${body.repo}#${body.pr}: ${pull.title}`.slice(0, 200),
        role: "reviewer",
        type: "review",
        ...(body.engine ? { engine: body.engine } : {}),
        ...(body.model ? { model: body.model } : {}),
      },
      undefined,
      undefined,
      { cwd: tree.path, mode: "review", pr: { repo: body.repo, number: body.pr, room: claim.id, worktreeId: claim.id } },
    ));
    const thread = threadOf(env, threadId);
    const row = valueOf((await thread.get()) as Outcome<ThreadRow>);
    // The reviewer is a seat of its own, so other seats (a second reviewer, a fixer) can sit beside it.
    const target = await seatTarget(env, config, row, { ...(body.engine ? { engine: body.engine } : {}), ...(body.model ? { model: body.model } : {}) }, null);
    valueOf((await thread.joinSeat(seat, target, "reviewer")) as Outcome<unknown>);
    done = (await stub.armed(threadId, token)) as RoomCore | null;
  } catch (err) {
    await stub.armFailed(token);
    if (threadId) await threadOf(env, threadId).archive(`room ${claim.id} could not be armed`);
    throw err;
  }
  if (!done) {
    // Another arm took this one over for being slow and armed the room: its thread is the room's.
    await threadOf(env, threadId).archive(`room ${claim.id} was armed by another request`);
    const { core } = await existingRoom(env, claim.id);
    return { room: await shown(env, core), created: false };
  }
  return { room: await shown(env, done), created: true };
}

/** `GET /workspaces/:name/rooms?repo=&pr=`: the pull request's room and its newest round. */
export async function findRoom(env: Env, workspace: string, repo: string, pr: number): Promise<{ room: Room; round: Round | null }> {
  const id = await workspaceOf(env, workspace).roomOf(roomKey(workspace, repo, pr));
  if (!id) refused(404, `workspace ${workspace} has no room for ${repo}#${pr}: arm one (POST /workspaces/${workspace}/rooms)`, CODES.roomNotFound);
  const { stub, core } = await existingRoom(env, id);
  return { room: await shown(env, core), round: (await stub.newestRound()) as Round | null };
}

export async function roundOf(env: Env, id: string, n: number): Promise<Round> {
  const { stub } = await existingRoom(env, id);
  return valueOf((await stub.round(n)) as Outcome<Round>);
}

/**
 * `POST /rooms/:id/rounds`: the reviewer's worktree moves to the pull request's head, the
 * room starts round n+1 there, and the reviewer's seat is asked for its verdict.
 */
export async function startRound(env: Env, id: string, body: StartRound): Promise<Round> {
  const { stub, core } = await existingRoom(env, id);
  valueOf((await stub.roundRefusal()) as Outcome<null>);
  const thread = threadOf(env, core.threadId!);
  const seat = body.seat ?? core.reviewerSeat;
  const seats = valueOf((await thread.seatList()) as Outcome<SeatList>).seats;
  if (!seats.some((s) => s.name === seat && s.state === "active"))
    refused(404, `room ${id}'s thread has no seat ${seat}`, CODES.seatNotFound, { seats: seats.filter((s) => s.state === "active").map((s) => s.name) });
  const [row, status] = await Promise.all([thread.get() as Promise<Outcome<ThreadRow>>, thread.turnStatus() as Promise<Outcome<TurnStatus>>]).then(([r, t]) => [valueOf(r), valueOf(t)] as const);
  if (status.running || status.queued > 0)
    refused(409, `the reviewer's thread ${row.id} is ${status.turn ? `running turn ${status.turn.turnId}` : "about to answer queued messages"}: ask when it is idle`, CODES.reviewerBusy, { threadId: row.id });
  if (row.archivedAt) refused(409, `the reviewer's thread ${row.id} is retired: restore it (POST /threads/${row.id}/restore)`, CODES.threadArchived);
  const [tree, context] = await Promise.all([worktreeAt(env, core.repo, core.pr, id, "review"), callCode<ReviewContext>(env, "GET", `${pullPath(core.repo, core.pr)}/context`)]);
  const ctx = valueOf(context);
  const round = valueOf((await stub.beginRound({ prompt: body.prompt ?? null, seat, head: tree.head.sha, base: tree.base.sha })) as Outcome<Round>);
  const earlier = earlierFindings((await stub.allRounds()) as Round[]);
  const text = reviewPrompt(ctx, { n: round.n, head: round.head, base: round.base, prompt: round.prompt, worktree: tree.path, earlier });
  let sent: Outcome<MessageAccepted>;
  try {
    sent = (await thread.postMessage({ text, seat, from: "room" }, `room:${id}:${round.n}`)) as Outcome<MessageAccepted>;
  } catch (err) {
    await stub.failRound(round.n, `the round's message could not be sent to the reviewer: ${(err as Error).message}`);
    throw err;
  }
  if (!sent.ok) {
    await stub.failRound(round.n, `the reviewer's thread refused the round's message: ${sent.body.error}`);
    valueOf(sent);
  } else await stub.roundAsked(round.n, (sent as { value: MessageAccepted }).value.seq);
  return valueOf((await stub.round(round.n)) as Outcome<Round>);
}

/** The findings the room's rounds raised, newest round first, each fingerprint once. */
function earlierFindings(rounds: Round[]): EarlierFinding[] {
  const seen = new Map<string, EarlierFinding>();
  for (const r of [...rounds].reverse())
    for (const f of r.verdict?.findings ?? []) if (!seen.has(f.fingerprint)) seen.set(f.fingerprint, { path: f.path, line: f.line, side: f.side, severity: f.severity, body: f.body, fingerprint: f.fingerprint });
  return [...seen.values()];
}

/**
 * `submit_verdict`: the reviewer's verdict for its room's running round, each finding
 * fingerprinted by the code at its line (the head's, or the base's for a removed line),
 * or given the fingerprint of the earlier finding of the same file it says it is again.
 */
export async function takeVerdict(env: Env, turn: ToolTurn, threadId: string, turnId: string, input: SubmitVerdictInput): Promise<Round> {
  if (!turn.room) refused(409, "this thread reviews for no room: only a room's reviewer returns verdicts", CODES.noRoundRunning);
  const stub = roomOf(env, turn.room);
  const running = (await stub.runningRound()) as Round | null;
  if (!running) refused(409, `no round of room ${turn.room} is running: nothing asked for a verdict`, CODES.noRoundRunning);
  const lines = input.findings.map((f) => ({ path: f.path, line: f.line, side: f.side ?? ("RIGHT" as const) }));
  const code = lines.length ? valueOf(await callCode<LinesAnswer>(env, "POST", "/git/lines", { id: turn.room, head: running.head, base: running.base, lines })).texts : [];
  const earlier = new Map(earlierFindings((await stub.allRounds()) as Round[]).map((f) => [f.fingerprint, f]));
  const findings: Finding[] = await Promise.all(
    input.findings.map(async ({ sameAs, ...f }, i) => ({
      ...f,
      side: lines[i]!.side,
      // A fingerprint the room never raised, or one of another file, is no earlier finding: this one is judged by its own.
      fingerprint:
        sameAs !== undefined && earlier.get(sameAs)?.path === f.path ? sameAs : await fingerprintOf({ path: f.path, side: lines[i]!.side, code: code[i] ?? null, body: f.body }),
    })),
  );
  const verdict: Verdict = { decision: input.decision, summary: input.summary, findings, turnId, seat: turn.seat, submittedAt: new Date().toISOString() };
  return valueOf((await stub.submitVerdict(threadId, turn.inputs, verdict)) as Outcome<Round>);
}

/**
 * `POST /rooms/:id/finalize`: the round's verdict as one review on the code host, at the
 * round's head. A round posted before answers its review again; a refusal of the code
 * host leaves the round ready, to be asked again. The post and its record run to the end
 * under `waitUntil` even when the caller goes away, so a review the code host took is
 * always recorded, and never posted a second time.
 */
export async function finalizeRound(env: Env, id: string, n: number | undefined, waitUntil: (p: Promise<unknown>) => void): Promise<PostedReview> {
  const { stub, core } = await existingRoom(env, id);
  const claim = valueOf((await stub.beginFinalize(n)) as Outcome<{ round: Round; done: boolean }>);
  if (claim.done) return claim.round.review!;
  const work = postVerdict(env, core, claim.round).then(
    async (review) => {
      await stub.endFinalize(claim.round.n, review);
      return review;
    },
    async (err: unknown) => {
      await stub.endFinalize(claim.round.n, null);
      throw err;
    },
  );
  waitUntil(work.catch(() => {}));
  return work;
}

/** The code service refuses a head the pull request has left (`409 round-stale`, naming both), just before it posts. */
async function postVerdict(env: Env, core: RoomCore, round: Round): Promise<PostedReview> {
  const verdict = round.verdict!;
  const posted = valueOf(
    await callCode<Omit<PostedReview, "postedAt">>(env, "POST", `${pullPath(core.repo, core.pr)}/review`, {
      commitId: round.head,
      decision: verdict.decision,
      summary: verdict.summary,
      findings: verdict.findings.map(({ path, line, side, severity, body, fingerprint }) => ({ path, line, side, severity, body, fingerprint })),
      source: `agent-runtime room ${core.id}, round ${round.n}`,
    }),
  );
  return { ...posted, postedAt: new Date().toISOString() };
}

/** `GET /rooms/capabilities`. */
export async function capabilities(env: Env): Promise<Capabilities> {
  const asked = await callCode<Capabilities>(env, "GET", "/github/capabilities");
  return asked.ok ? asked.value : { verdictPoster: { available: false, reason: asked.body.error } };
}
