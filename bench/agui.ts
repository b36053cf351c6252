/**
 * The AG-UI rows of `npm run bench` (issue 31): a streamed reply read over
 * `GET /threads/:id/agui` and over `GET /threads/:id/stream` at once, one reader on each
 * in the same turns, so both see the same deltas from the same engine at the same time
 * and the difference between them is what the AG-UI route adds to each delta.
 */
import type { Front } from "../test/support/front.js";
import { sim } from "../test/support/http.js";
import { percentile } from "./load.js";

type Row = (...cells: (string | number)[]) => void;
type Fmt = (n: number, digits?: number) => string;

const TURNS = Number(process.env.BENCH_AGUI_TURNS ?? 40);

/** An SSE reader that stamps each frame with the time its chunk arrived. */
class Reader {
  readonly frames: { at: number; id: string | null; event: string | null; data: string }[] = [];
  private readonly stop = new AbortController();
  private connected!: () => void;
  readonly open = new Promise<void>((r) => (this.connected = r));
  readonly done: Promise<void>;

  constructor(url: string) {
    this.done = this.read(url).catch((err: unknown) => {
      if (!this.stop.signal.aborted) throw err;
    });
  }

  private async read(url: string): Promise<void> {
    const res = await fetch(url, { signal: this.stop.signal, headers: { accept: "text/event-stream" } });
    if (!res.ok) throw new Error(`${url} answered ${res.status}`);
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of res.body! as unknown as AsyncIterable<Uint8Array>) {
      const at = performance.now();
      this.connected();
      buffer += decoder.decode(chunk, { stream: true });
      let cut: number;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const lines = buffer.slice(0, cut).split("\n");
        buffer = buffer.slice(cut + 2);
        const field = (name: string) => lines.find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2) ?? null;
        const data = field("data");
        if (data !== null) this.frames.push({ at, id: field("id"), event: field("event"), data });
      }
    }
  }

  close(): Promise<void> {
    this.stop.abort();
    return this.done;
  }
}

interface TurnTimes {
  /** Each text delta's arrival, from the post, in order: over `agui`, over `stream`. */
  agui: number[];
  stream: number[];
}

/** Who reads a turn besides the `stream` reader timed: an `agui` reader (timed too), a second `stream` reader, or nobody. */
type Beside = "agui" | "stream" | "nobody";

/** One turn whose reply is `deltas` pieces `delayMs` apart, read over `stream`, and by whoever is `beside` it. */
async function turn(front: Front, threadId: string, deltas: number, delayMs: number, beside: Beside = "agui"): Promise<TurnTimes> {
  const after = (await front.client.tail(threadId, { before: "latest", limit: 1 })).events.at(-1)!.seq;
  const agui = beside === "agui" ? new Reader(`${front.url}/threads/${threadId}/agui?after=${after}`) : null;
  const other = beside === "stream" ? new Reader(`${front.url}/threads/${threadId}/stream`) : null;
  const stream = new Reader(`${front.url}/threads/${threadId}/stream`);
  await Promise.all([agui?.open, other?.open, stream.open]);
  const started = performance.now();
  // The reply is "echo: " and the text: long enough for every piece to be a delta of its own.
  await front.client.post(threadId, { text: sim({ chunks: deltas, delayMs }, "x".repeat(deltas * 2)) });
  const until = Date.now() + 60_000;
  const streamText = () => stream.frames.filter((f) => f.event === "delta" && (JSON.parse(f.data) as { type?: string }).type === "text");
  let aguiText: Reader["frames"] = [];
  if (agui) {
    // The message, posted while the thread is idle, is a run of its own: the turn's run is the one with the reply.
    const finished = () => {
      const start = agui.frames.findIndex((f) => f.data.includes('"TEXT_MESSAGE_START"') && f.data.includes('"assistant"'));
      return start >= 0 && agui.frames.slice(start).some((f) => f.data.includes('"RUN_FINISHED"') || f.data.includes('"RUN_ERROR"'));
    };
    while (!finished() && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
    const parsed = agui.frames.map((f) => ({ ...f, e: JSON.parse(f.data) as { type: string; role?: string; messageId?: string } }));
    const reply = parsed.find((f) => f.e.type === "TEXT_MESSAGE_START" && f.e.role === "assistant")?.e.messageId;
    // Live text carries no id; a stored reply's rest would (none when every delta came through).
    aguiText = parsed.filter((f) => f.e.type === "TEXT_MESSAGE_CONTENT" && f.e.messageId === reply && f.id === null);
  }
  while (streamText().length < deltas && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
  await Promise.all([agui?.close(), other?.close(), stream.close()]);
  const text = streamText();
  if ((agui && aguiText.length !== deltas) || text.length !== deltas)
    throw new Error(`agui bench: the turn's reply came as ${aguiText.length} AG-UI deltas and ${text.length} stream deltas, not ${deltas}`);
  if (!agui) while ((await front.client.turn(threadId)).running && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
  return { agui: aguiText.map((f) => f.at - started), stream: text.map((f) => f.at - started) };
}

/** `TURNS` rounds of three turns (after a round to warm up): one read over both routes, one with a second `stream` reader instead, one with none. */
async function measure(front: Front, deltas: number, delayMs: number, besides: Beside[]): Promise<Record<Beside, TurnTimes[]>> {
  const { threadId } = await front.client.spawn();
  for (const beside of besides) await turn(front, threadId, deltas, delayMs, beside);
  const out: Record<Beside, TurnTimes[]> = { agui: [], stream: [], nobody: [] };
  for (let i = 0; i < TURNS; i++) for (const beside of besides) out[beside].push(await turn(front, threadId, deltas, delayMs, beside));
  return out;
}

export async function aguiRows(front: Front, row: Row, fmt: Fmt): Promise<void> {
  const ms = (xs: number[]) => `p50 ${fmt(percentile(xs, 50), 1)} ms, p99 ${fmt(percentile(xs, 99), 1)} ms`;
  const extra = (times: TurnTimes[]) => times.flatMap((t) => t.agui.map((a, i) => a - t.stream[i]!));

  // Every piece at once: the deltas come as fast as the engine passes them on, so each route's own cost per delta shows.
  const { agui: burst, stream: twoStreams, nobody } = await measure(front, 200, 0, ["agui", "stream", "nobody"]);
  const lastAgui = burst.map((t) => t.agui.at(-1)!);
  const lastStream = burst.map((t) => t.stream.at(-1)!);
  const lastBesideStream = twoStreams.map((t) => t.stream.at(-1)!);
  const lastAlone = nobody.map((t) => t.stream.at(-1)!);
  row(
    `a streamed reply of 200 deltas (no pause) over GET /agui, from the post to its last delta (${TURNS} turns, a reader on each route in the same turn)`,
    `${ms(lastAgui)}; per delta after the same delta over /stream: ${ms(extra(burst))}`,
    `the same deltas over GET /stream: ${ms(lastStream)}`,
    fmt(percentile(lastAgui, 50) / percentile(lastStream, 50), 2),
    "",
  );
  // The AG-UI feed takes each delta before the stream's readers do: what a reader of it costs them, against what a second stream reader costs.
  row(
    `the same reply over GET /stream while an AG-UI reader follows the thread, from the post to its last delta (${TURNS} turns)`,
    ms(lastStream),
    `while a second /stream reader does, turns in between on the same thread: ${ms(lastBesideStream)}; with no other reader: ${ms(lastAlone)}`,
    fmt(percentile(lastStream, 50) / percentile(lastBesideStream, 50), 2),
    "",
  );

  // As a model writes: each delta's latency from the post, over each route.
  const { agui: paced } = await measure(front, 50, 10, ["agui"]);
  const eachAgui = paced.flatMap((t) => t.agui);
  const eachStream = paced.flatMap((t) => t.stream);
  const firstAgui = paced.map((t) => t.agui[0]!);
  const firstStream = paced.map((t) => t.stream[0]!);
  row(
    `a streamed reply of 50 deltas 10 ms apart over GET /agui, each delta after the same delta over /stream (${TURNS} turns, same turns)`,
    `${ms(extra(paced))}; the first delta from the post: ${ms(firstAgui)}`,
    `over GET /stream, the first delta from the post: ${ms(firstStream)}`,
    fmt(percentile(eachAgui.map((a, i) => a / eachStream[i]!), 50), 2),
    "",
  );
}
