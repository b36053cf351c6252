import { chownSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { recordPlaces, registeredPlaces } from "../../local-front/bindings/sandbox/registry.js";
import { removeDir } from "../support/front.js";

/** The host's registry of runtimes (docs/credentials.md, "Other runtimes on the host"), in a home of its own. */
describe("the registry of runtimes", () => {
  const saved = process.env.HOME;
  let home: string;
  beforeEach(() => {
    home = mkdtempSync("/var/tmp/agent-runtime-registry-");
    process.env.HOME = home;
  });
  afterEach(() => removeDir(home));
  afterAll(() => {
    process.env.HOME = saved;
  });

  it("records a runtime's places owner-only, keeps them while any exists, and names ~/.service whole", () => {
    const data = join(home, "data");
    mkdirSync(data);
    recordPlaces(data, [data, join(home, "accounts.json")]);
    const registry = join(home, ".service", "runtimes");
    expect(statSync(registry).mode & 0o777).toBe(0o700);
    const [entry] = readdirSync(registry);
    expect(statSync(join(registry, entry!)).mode & 0o777).toBe(0o600);
    expect(registeredPlaces()).toEqual(expect.arrayContaining([join(home, ".service"), data, join(home, "accounts.json")]));
    // A runtime whose places are all gone leaves no entry behind at the next record (the fence would skip them anyway).
    removeDir(data);
    recordPlaces(join(home, "other"), [join(home, "other")]);
    expect(registeredPlaces()).not.toContain(data);
  });

  it.skipIf(process.getuid?.() !== 0)("hides only what another account owns, of the places its entry names", () => {
    const nobody = 65534;
    const registry = join(home, ".service", "runtimes");
    mkdirSync(registry, { recursive: true });
    const theirs = join(home, "theirs");
    mkdirSync(theirs);
    chownSync(theirs, nobody, nobody);
    const entry = join(registry, "other-user.json");
    writeFileSync(entry, JSON.stringify({ dataDir: theirs, places: [theirs, "/usr"] }));
    chownSync(entry, nobody, nobody);
    const places = registeredPlaces();
    expect(places).toContain(theirs);
    expect(places).not.toContain("/usr");
  });
});
