import { request, type IncomingHttpHeaders } from "node:http";

export interface RawFollow {
  status: number;
  headers: IncomingHttpHeaders;
  /** Raw SSE frames (blocks between blank lines) as they arrive. */
  frames: string[];
  body: string;
  close(): void;
}

/** A follow on a fresh connection (no pooled keep-alive), as EventSource and curl open one. */
export function openFollow(url: string, path: string, headers: Record<string, string> = {}): Promise<RawFollow> {
  return new Promise((resolve, reject) => {
    const req = request(url + path, { agent: false, headers }, (res) => {
      const out: RawFollow = { status: res.statusCode!, headers: res.headers, frames: [], body: "", close: () => req.destroy() };
      let buffer = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        out.body += chunk;
        buffer += chunk;
        let cut: number;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          out.frames.push(buffer.slice(0, cut));
          buffer = buffer.slice(cut + 2);
        }
      });
      res.on("error", () => {});
      resolve(out);
    });
    req.on("error", reject);
    req.end();
  });
}

export function seqs(f: RawFollow): number[] {
  return f.frames.filter((x) => x.startsWith("id: ")).map((x) => Number(x.slice(4, x.indexOf("\n"))));
}

export async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}
