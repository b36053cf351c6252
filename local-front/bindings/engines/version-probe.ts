import { execFile } from "node:child_process";
import { promisify } from "node:util";

/** What `<binary> --version` printed, or why it could not be run: how the engines' CLIs are probed at start. */
export async function versionOf(binary: string): Promise<{ printed: string } | { failed: string }> {
  try {
    const { stdout } = await promisify(execFile)(binary, ["--version"], { timeout: 30_000 });
    return { printed: stdout.trim() };
  } catch (err) {
    return { failed: `${binary} could not be run: ${(err as Error).message.split("\n")[0]}` };
  }
}
