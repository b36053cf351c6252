import { CODES } from "../../../src/api/errors.js";
import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import { APPROVAL_DECISIONS, ENGINES_TOKEN_HEADER, QUESTION_ACTIONS, type EngineReport, type InterfaceRequest, type ReflectionRequest, type SummaryRequest, type TurnEndNote, type TurnRequest } from "../../../src/api/engine.js";
import { writeReflections } from "../memory/reflect.js";
import { runEngineATurn } from "./engine-a/turn.js";
import type { EngineEntry, EngineHostState, VolumeState } from "../../../src/api/engines.js";
import type { EngineABinary } from "./engine-a/binary.js";
import type { EngineBinary } from "./engine-b/binary.js";
import { runEngineBTurn } from "./engine-b/turn.js";
import { writeSummary } from "../curator/summary.js";
import { writeInterface } from "../curator/interface.js";
import { runPiTurn, type PiDeps } from "./pi/turn.js";
import type { EngineTurn } from "./turn.js";
import { invalid, readJson, segment, serveBinding, type BindingSocket } from "../http.js";
import { ok, refuse, type Outcome, type Refusal } from "../../../src/api/outcome.js";
import { logTurnEnd } from "./turn-log.js";
import { mergeWork } from "../git/merge.js";
import { fencedGit, mergePlaces } from "./merge-git.js";
import { within } from "../code/fence.js";
import { realPath } from "../sandbox/runtime.js";
import { measureVolume } from "../host-report.js";
import { startToolServer } from "./tools/tool-server.js";
import { scopeOf, type RuntimeLink } from "./tools/runtime-tools.js";

/** An idle report stream says it is alive this often. */
const PING_MS = 15_000;

export interface EngineHost {
  /** host:port, for the worker's ENGINES binding. */
  address: string;
  close(): Promise<void>;
}

const DecisionBody = z.object({ decision: z.enum(APPROVAL_DECISIONS), expired: z.literal(true).optional() });
const QuestionBody = z.object({ action: z.enum(QUESTION_ACTIONS), answer: z.string().optional() });
const SteerBody = z.object({ seq: z.number().int().positive(), text: z.string() });
const MergeBody = z.object({ into: z.string().startsWith("/"), from: z.string().startsWith("/"), message: z.string().min(1).max(1000), worktree: z.enum(["review", "build"]).optional() });

/**
 * The engines binding, served by the front (src/api/engine.ts has the protocol). Turns
 * live here, in memory: when the Thread object's report stream goes away (the object
 * was evicted or the host is stopping), the turn is interrupted, because nobody would
 * record what it does next.
 */
export interface EngineDeps extends PiDeps {
  /** The data directory, whose volume `GET /volume` measures. */
  dataDir: string;
  /** Engine resume state: `SERVICE_ENGINE_STATE_DIR`. */
  stateDir: string;
  /** engine_a's CLI (the agent SDK's) as found at boot. */
  engineA: EngineABinary;
  /** engine_b's CLI as found at boot. */
  engineB: EngineBinary;
  /** The worker's `POST /internal/tools`, where a turn's runtime tool calls run. */
  runtime: RuntimeLink;
  /** The registered code roots' real paths: turns are offered the code reads when there is one, and build threads are fenced out of them. */
  codeRoots: string[];
  /** Why the credential proxy last failed a thread's provider call since a time, if it did. */
  proxyFailureSince(threadId: string, sinceMs: number): string | null;
}

/**
 * The code root the directory's real path lies in or holds, if any. A directory that does
 * not exist yet (the engine makes it) is placed by its nearest existing parent's real path.
 */
function rootHolding(cwd: string, roots: string[]): string | null {
  const real = realPath(cwd);
  return roots.find((root) => within(root, real) || within(real, root)) ?? null;
}

/** engine_a's and engine_b's processes run only inside the sandbox; pi runs, and refuses each tool call instead. */
function engineEntries(deps: EngineDeps): EngineEntry[] {
  const fenced = deps.sandbox.state === "unavailable" ? { available: false, reason: deps.sandbox.refusal() } : {};
  return [
    { engine: "pi", binary: null, versionFound: "in process (pi-agent-core)", versionNeeded: null, available: true, reason: null },
    deps.engineA.available ? { ...deps.engineA, ...fenced } : deps.engineA,
    deps.engineB.available ? { ...deps.engineB, ...fenced } : deps.engineB,
  ];
}

/**
 * A failed turn whose provider calls the proxy could not complete says so first: an
 * engine reports an unreachable provider as a login or connection failure, and an
 * operator must be able to tell that from a revoked login (incidents group by message).
 */
function withProxyCause(r: EngineReport & { type: "end" }, cause: string | null): EngineReport {
  if (!r.failure || !cause) return r;
  return { ...r, failure: { ...r.failure, error: `${cause}; the engine reported: ${r.failure.error}` } };
}

export async function startEngineHost(deps: EngineDeps, token: string, socket?: BindingSocket): Promise<EngineHost> {
  const turns = new Map<string, EngineTurn>();
  const toolServer = await startToolServer(deps.runtime);

  const startTurn = (request: TurnRequest, res: ServerResponse): Refusal | void => {
    const entry = engineEntries(deps).find((e) => e.engine === request.engine);
    const startedAt = Date.now();
    if (entry && !entry.available) {
      logTurnEnd(request, { class: "engine-unavailable" }, startedAt);
      // `class` is what the Thread reads of a turn that never started.
      return refuse(503, `${entry.engine} is not available: ${entry.reason}`, CODES.engineUnavailable, { class: "engine-unavailable" });
    }
    res.writeHead(200, { "content-type": "application/x-ndjson", "cache-control": "no-cache" });
    res.flushHeaders();
    let ended = false;
    // What an engine reports in one go (a model call's reply, tool calls and usage) leaves
    // as one chunk of the stream: the Thread records reports that come together in one commit.
    let batch = "";
    const send = () => {
      const lines = batch;
      batch = "";
      if (res.writableEnded || res.destroyed) return;
      res.write(lines);
      if (ended) res.end();
    };
    const emit = (r: EngineReport) => {
      if (ended || res.writableEnded) return;
      if (r.type === "end") {
        ended = true;
        logTurnEnd(request, r.failure ?? null, startedAt);
        r = withProxyCause(r, deps.proxyFailureSince(request.threadId, startedAt));
      }
      if (batch === "") process.nextTick(send);
      batch += `${JSON.stringify(r)}\n`;
    };
    // The worker fenced the spawn's cwd as written; a link can still lead into a root, so its real path is checked here, where the session starts.
    const fence = request.buildFence && request.cwd ? rootHolding(request.cwd, deps.codeRoots) : null;
    if (fence) return emit({ type: "end", outcome: "failed", failure: { class: "permission", error: `a build thread does not work in the registered checkout ${fence}: its cwd leads there (docs/code.md, "The fence")` } });
    const scope = scopeOf(request, deps.codeRoots.length > 0);
    const toolToken = toolServer.grant(scope);
    const tools = { scope, link: deps.runtime, url: toolServer.url, token: toolToken };
    const turn =
      request.engine === "engine_a"
        ? runEngineATurn(request, { ...deps, binary: deps.engineA, tools }, emit)
        : request.engine === "engine_b"
          ? runEngineBTurn(request, { ...deps, binary: deps.engineB, tools }, emit)
          : runPiTurn(request, { ...deps, tools }, emit);
    turns.set(request.turnId, turn);
    const ping = setInterval(() => emit({ type: "ping" }), PING_MS);
    res.on("close", () => {
      if (!ended) turn.interrupt();
    });
    void turn.done.finally(() => {
      clearInterval(ping);
      toolServer.revoke(toolToken);
      // A turn the runtime goes on with after a full window runs again under the same id.
      if (turns.get(request.turnId) === turn) turns.delete(request.turnId);
    });
  };

  const route = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<Outcome<unknown> | void> => {
    const path = url.pathname;
    if (req.method === "GET" && path === "/engines") return ok({ engines: engineEntries(deps), sandbox: deps.sandbox.report() } satisfies EngineHostState);
    if (req.method === "GET" && path === "/volume") return ok((await measureVolume(deps.dataDir)) satisfies VolumeState);
    if (req.method !== "POST") return refuse(405, "the engine host serves GET /engines and /volume, and POST only besides", CODES.methodNotAllowed);
    const body = await readJson(req);
    if (path === "/turns") return startTurn(body as TurnRequest, res);
    if (path === "/summaries") return ok(await writeSummary(body as SummaryRequest, deps.network));
    if (path === "/reflections") return ok(await writeReflections(body as ReflectionRequest, deps.network));
    if (path === "/interfaces") return ok(await writeInterface(body as InterfaceRequest, deps.network));
    if (path === "/turn-ends") {
      const note = body as TurnEndNote;
      logTurnEnd(note, { class: note.class }, note.startedAt);
      return ok({ logged: true });
    }
    if (path === "/merges") {
      const work = MergeBody.safeParse(body);
      if (!work.success) return invalid(work.error);
      // The merge's git runs as the parent's session would: no sandbox, no merge.
      const fenced = deps.sandbox.refusalFor(mergePlaces(work.data));
      if (fenced)
        return deps.sandbox.state === "unavailable"
          ? refuse(503, `merges run git fenced as the thread's session: ${fenced}`, CODES.sandboxUnavailable)
          : refuse(409, fenced, CODES.mergeFailed);
      return mergeWork(work.data, fencedGit(deps.sandbox, work.data));
    }
    const m = /^\/turns\/([^/]+)\/(interrupt|steer|approvals|questions)(?:\/([^/]+))?$/.exec(path);
    if (!m) return refuse(404, `no engine route ${path}`, CODES.routeNotFound);
    const turn = turns.get(segment(m[1]!));
    if (!turn) return refuse(404, `no running turn ${m[1]}`, CODES.noTurnRunning);
    if (m[2] === "interrupt") {
      turn.interrupt();
      return ok({ interrupting: true });
    }
    if (m[2] === "steer") {
      const steer = SteerBody.safeParse(body);
      if (!steer.success) return invalid(steer.error);
      return (await turn.steer(steer.data)) ? ok({ queued: true }) : refuse(409, `turn ${m[1]} cannot take a steering message now`, CODES.steerNotTaken);
    }
    const id = segment(m[3] ?? "");
    if (m[2] === "approvals") {
      const d = DecisionBody.safeParse(body);
      if (!d.success) return invalid(d.error);
      // A deny nobody gave (the thread's approval timeout passed) is told to the model as such.
      return turn.decide(id, d.data.expired ? "expired" : d.data.decision) ? ok({ delivered: true }) : refuse(404, `turn waits on no approval ${id}`, CODES.approvalNotFound);
    }
    const q = QuestionBody.safeParse(body);
    if (!q.success) return invalid(q.error);
    return turn.reply(id, q.data) ? ok({ delivered: true }) : refuse(404, `turn waits on no question ${id}`, CODES.questionNotFound);
  };

  // A turn waiting on a person may keep its report stream open for hours.
  const { address, close } = await serveBinding({ name: "the engine host", gate: { header: ENGINES_TOKEN_HEADER, token }, timeouts: { request: 0, headers: 60_000 } }, route, socket);
  return {
    address,
    close: async () => {
      for (const t of turns.values()) t.interrupt();
      await close();
      await toolServer.close();
    },
  };
}
