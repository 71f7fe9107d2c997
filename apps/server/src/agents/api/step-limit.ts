/**
 * Model steps a job of an API agent without maxSteps may take. Kept apart from the loop, so the
 * kind's form (which names it) does not load the AI SDK with it.
 */
export const DEFAULT_MAX_STEPS = 25;
