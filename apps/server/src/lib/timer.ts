/** setTimeout's largest delay; longer ones would fire at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;
