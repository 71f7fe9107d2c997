import { useQuery } from "@tanstack/react-query";
import type { JobList } from "@corral/shared";

async function fetchJobs(): Promise<JobList> {
  const res = await fetch("/api/jobs?limit=50");
  if (!res.ok) throw new Error(((await res.json()) as { error: string }).error);
  return (await res.json()) as JobList;
}

export function App() {
  const jobs = useQuery({ queryKey: ["jobs"], queryFn: fetchJobs, refetchInterval: 2000 });
  return (
    <main style={{ fontFamily: "system-ui, sans-serif", padding: "1rem 2rem" }}>
      <h1>Corral</h1>
      {jobs.isError && <p role="alert">Cannot load jobs: {jobs.error.message}. Open the URL Corral printed at startup.</p>}
      {jobs.data && (
        <table>
          <thead>
            <tr>
              <th>Job</th>
              <th>Agent</th>
              <th>Status</th>
              <th>Prompt</th>
            </tr>
          </thead>
          <tbody>
            {jobs.data.jobs.map((job) => (
              <tr key={job.id}>
                <td>{job.id}</td>
                <td>{job.agent}</td>
                <td>{job.status}</td>
                <td>{job.prompt.slice(0, 80)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {jobs.data?.jobs.length === 0 && <p>No jobs yet.</p>}
    </main>
  );
}
