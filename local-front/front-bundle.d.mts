/** The bundle of `projectDir`'s front (`local-front/main.ts`), built if its sources changed; its path. */
export function frontBundle(projectDir: string): Promise<string>;
/** Node's flags for running the bundle. */
export const FRONT_FLAGS: string[];
