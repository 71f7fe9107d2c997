// Globs (`*`, `**`, `?`, `{a,b}`) matched in time linear in the path: a model's pattern such as
// `**/**/**/**/x` turned into a backtracking regular expression takes polynomial time over long
// paths, so the glob runs as a set of states stepped once per character (Thompson's construction).

/** One step of a glob: a character, `?`, `*` (not `/`), `**` (anything), or a choice made further on. */
type Step =
  | { kind: "char"; char: string }
  | { kind: "one" }
  | { kind: "star" }
  | { kind: "any" }
  /** Goes on at the next step and also at `to` (for `**​/`: either no directory, or some ending in `/`). */
  | { kind: "split"; to: number }
  /** One of several literal strings, compiled as its own steps; ends jump to `to`. */
  | { kind: "jump"; to: number };

/** A glob's states are its characters, about: bounded, so matching one path is bounded too. */
const MAX_GLOB_CHARS = 1000;

function compile(glob: string): Step[] {
  const steps: Step[] = [];
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === "*" && glob[i + 1] === "*") {
      if (glob[i + 2] === "/") {
        // `**/` matches any number of directories, none included: skip, or anything then `/`.
        const split: Step = { kind: "split", to: 0 };
        steps.push(split, { kind: "any" }, { kind: "char", char: "/" });
        split.to = steps.length;
        i += 2;
      } else {
        steps.push({ kind: "any" });
        i += 1;
      }
    } else if (c === "*") steps.push({ kind: "star" });
    else if (c === "?") steps.push({ kind: "one" });
    else if (c === "{" && glob.indexOf("}", i) > i) {
      const end = glob.indexOf("}", i);
      // Alternatives are literal: a split to each, and a jump from each end to after the last.
      const alternatives = glob.slice(i + 1, end).split(",");
      const jumps: Step[] = [];
      for (const [n, alt] of alternatives.entries()) {
        const split: Step | null = n < alternatives.length - 1 ? { kind: "split", to: 0 } : null;
        if (split) steps.push(split);
        for (const char of alt) steps.push({ kind: "char", char });
        const jump: Step = { kind: "jump", to: 0 };
        steps.push(jump);
        jumps.push(jump);
        if (split) split.to = steps.length;
      }
      for (const jump of jumps) if (jump.kind === "jump") jump.to = steps.length;
      i = end;
    } else steps.push({ kind: "char", char: c });
  }
  return steps;
}

/** A predicate telling whether a whole `/`-separated path matches `glob`. */
export function globMatcher(glob: string): (path: string) => boolean {
  if (glob.length > MAX_GLOB_CHARS) throw new RangeError(`the glob is longer than ${MAX_GLOB_CHARS} characters`);
  const steps = compile(glob);
  const accept = steps.length;
  // marks[s] === round: state s is in the set of this round (no clearing between characters).
  const marks = new Uint32Array(accept + 1);
  let round = 0;
  /** Adds `state` and every state reachable from it without reading a character. */
  const close = (list: number[], state: number) => {
    const stack = [state];
    while (stack.length) {
      const s = stack.pop() as number;
      if (marks[s] === round) continue;
      marks[s] = round;
      list.push(s);
      const step = steps[s];
      if (!step) continue;
      if (step.kind === "split") stack.push(s + 1, step.to);
      else if (step.kind === "jump") stack.push(step.to);
      else if (step.kind === "star" || step.kind === "any") stack.push(s + 1);
    }
  };
  return (path) => {
    round++;
    let list: number[] = [];
    close(list, 0);
    for (const c of path) {
      round++;
      const next: number[] = [];
      for (const s of list) {
        const step = steps[s];
        if (!step) continue;
        if (step.kind === "char" ? step.char === c : step.kind === "one" ? c !== "/" : false) close(next, s + 1);
        else if (step.kind === "any" || (step.kind === "star" && c !== "/")) close(next, s);
      }
      if (!next.length) return false;
      list = next;
    }
    return marks[accept] === round;
  };
}
