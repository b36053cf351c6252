import { describe, expect, it } from "vitest";
import { globMatcher } from "../../local-front/bindings/code/glob.js";

describe("code globs (local-front/bindings/code/glob.ts)", () => {
  it("matches *, **, ?, braces, and the base name without a slash", () => {
    const m = (g: string, p: string) => globMatcher(g)(p);
    expect(m("*.ts", "src/a/b.ts")).toBe(true);
    expect(m("*.ts", "src/a/b.tsx")).toBe(false);
    expect(m("src/*.ts", "src/a/b.ts")).toBe(false);
    expect(m("src/**/*.ts", "src/a/b.ts")).toBe(true);
    expect(m("src/**/*.ts", "src/b.ts")).toBe(true);
    expect(m("**/*.{go,rs}", "cmd/main.go")).toBe(true);
    expect(m("{*.ts,*.js}", "x/y.js")).toBe(true);
    expect(m("{?,b}", "a")).toBe(true);
    expect(m("fil?.md", "file.md")).toBe(true);
    expect(m("{unclosed", "{unclosed")).toBe(true);
    expect(m("src/", "src/a/b.ts")).toBe(true);
    expect(m("src/", "lib/a.ts")).toBe(false);
  });

  it("refuses a glob it would only match in part", () => {
    expect(() => globMatcher("{a,{b,c}}.ts")).toThrow(/inside braces/);
    expect(() => globMatcher("{a,b,c,d}{a,b,c,d}{a,b,c,d}{a,b}")).toThrow(/more than 64/);
  });

  // A backtracking regex takes minutes on these; this matcher answers at once (the test's timeout is the bound).
  it("answers patterns that make a backtracking regex explode", () => {
    expect(globMatcher("************#/x")("a".repeat(56))).toBe(false);
    expect(globMatcher("*s*s*s*s*s*s#")("s".repeat(70))).toBe(false);
    expect(globMatcher("*a*a*a*a*a*a*a*a*a*a")("a".repeat(40) + "b")).toBe(false);
    expect(globMatcher("**/**/**/**/**/**/x")(Array.from({ length: 60 }, () => "d").join("/"))).toBe(false);
  });
});
