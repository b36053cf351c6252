import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { TurnRequest } from "../../../../src/api/engine.js";

/**
 * The programs codex 0.160.0 runs without asking under its `untrusted` approval policy
 * when no exec-policy rule matches them: its `is_known_safe_command` list
 * (codex-rs/shell-command/src/command_safety/is_safe_command.rs: read-only programs,
 * `base64`, `find`, `rg` and `sed -n` without their writing options, `numfmt` and `tac` on
 * Linux). A rule matching a program decides for it instead, so naming each one here
 * leaves no command that codex runs on its own judgement. Beside them, read-only
 * programs other releases count as safe or may (`git` for its read-only subcommands,
 * `cargo check` once, the rest common inspection tools): under `untrusted` they ask
 * already, and a rule keeps them asking should a release add them. Read the safe list
 * again when ENGINE_B_VERSION moves.
 */
export const PROMPTED_PROGRAMS = [
  // 0.160.0's safe list.
  "base64", "cat", "cd", "cut", "echo", "expr", "false", "find", "grep", "head", "id", "ls", "nl", "numfmt", "paste",
  "pwd", "rev", "rg", "sed", "seq", "stat", "tac", "tail", "tr", "true", "uname", "uniq", "wc", "which", "whoami",
  // Safe in other releases, or likely to be.
  "awk", "basename", "cargo", "cmp", "comm", "date", "df", "diff", "dirname", "du", "env", "file", "git", "hexdump",
  "jq", "less", "more", "od", "printenv", "readlink", "realpath", "sort", "tree", "xxd",
] as const;

/** Named apart from codex's own `default.rules`, where an "always allow" answer would append. */
const RULES_FILE = "runtime.rules";

/**
 * The exec-policy rules a thread's permissions need in its `CODEX_HOME/rules/`: under
 * `ask` and `deny` each of these programs prompts, as every other command already does
 * under `untrusted`, so codex runs nothing before the binding answers it (a person under
 * `ask`, a decline at once under `deny`). codex evaluates the rules before it runs
 * anything: a program given by an absolute or relative path is matched by its name, each
 * command of a `bash -c` script on its own, and the strictest match across all rule files
 * wins. Not `forbidden` under `deny`: codex then refuses the call without an item, and the
 * log would not show the call the model made and was refused, as it does on every engine.
 * `allow` needs none.
 */
export function execRules(permissions: TurnRequest["permissions"]): string | null {
  if (permissions === "allow") return null;
  const why = "the thread's permissions decide every command: asked of a person, or refused";
  return `# Written by the agent runtime for each turn.\nprefix_rule(pattern=[${JSON.stringify(PROMPTED_PROGRAMS)}], decision="prompt", justification=${JSON.stringify(why)})\n`;
}

/** Writes (or, under `allow`, removes) the thread's rules before codex starts and loads them. */
export async function placeExecRules(home: string, permissions: TurnRequest["permissions"]): Promise<void> {
  const path = join(home, "rules", RULES_FILE);
  const rules = execRules(permissions);
  if (rules === null) return rm(path, { force: true });
  await mkdir(join(home, "rules"), { recursive: true });
  await writeFile(path, rules);
}
