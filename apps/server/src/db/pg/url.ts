/**
 * CORRAL_DATABASE_URL as it can be shown (banner, errors): user, host, port and database, never
 * the password. Apart from the client so that showing it does not load PostgreSQL's driver.
 */
export function describePgUrl(url: string): string {
  try {
    const u = new URL(url);
    u.password = "";
    return u.toString().replace(/^postgres(ql)?:\/\/([^@/]*):@/, "postgres$1://$2@");
  } catch {
    return "(CORRAL_DATABASE_URL is not a URL)";
  }
}
