import type { LaunchJobBody } from "@corral/shared";

/** The Launch form as typed: every field a string until launchBody reads it. */
export interface FormState {
  agent: string;
  prompt: string;
  workdir: string;
  model: string;
  timeout: string;
}

export const emptyForm: FormState = { agent: "", prompt: "", workdir: "", model: "", timeout: "" };

/** Builds the body; a bad timeout is reported at its field before anything is sent. */
export function launchBody(form: FormState): { body: LaunchJobBody } | { field: string; message: string } {
  const body: LaunchJobBody = { agent: form.agent, prompt: form.prompt };
  if (form.workdir.trim()) body.workdir = form.workdir.trim();
  if (form.model.trim()) body.model = form.model.trim();
  if (form.timeout.trim()) {
    const n = Number(form.timeout.trim());
    if (!Number.isInteger(n) || n < 1) return { field: "timeoutS", message: "give a whole number of seconds, 1 or more" };
    body.timeoutS = n;
  }
  return { body };
}
