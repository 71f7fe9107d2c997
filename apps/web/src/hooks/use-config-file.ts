import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect } from "react";
import { configFileApi } from "../api/config-file.js";
import { queryKeys } from "../lib/transport/query-keys.js";

/** The file changes outside the panel and nothing announces it, so it is asked for again every few seconds. */
const POLL_MS = 5000;

/** The config file's state; when it loads again, the agents it declares are fetched again too. */
export function useConfigFile() {
  const client = useQueryClient();
  const query = useQuery({ queryKey: queryKeys.configFile, queryFn: ({ signal }) => configFileApi.status(signal), refetchInterval: POLL_MS });
  const loadedAt = query.data?.loadedAt;
  useEffect(() => {
    if (loadedAt != null) void client.invalidateQueries({ queryKey: queryKeys.agents.all });
  }, [loadedAt, client]);
  return query;
}
