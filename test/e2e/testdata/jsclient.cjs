// Drives the SQL listener with the official ClickHouse JavaScript client
// (run by TestJSClient). Prints one JSON object with what each call gave.
const { createClient } = require(process.env.CH_CLIENT);

const url = process.env.CH_URL;
const db = process.env.CH_DB;
const pages = "SELECT page, count() AS views, uniqExact(visitor) AS visitors FROM views_raw WHERE site = {site:String} AND verdict = {verdict:String} GROUP BY page ORDER BY page";
const params = { site: "a.example", verdict: "valid" };

async function main() {
  const client = createClient({ url, username: "analyst", password: process.env.CH_TOKEN, database: db, compression: { response: true } });
  const out = {};
  out.ping = (await client.ping()).success;
  out.json = (await (await client.query({ query: pages, format: "JSON", query_params: params })).json()).data;
  out.jsonEachRow = await (await client.query({ query: pages, format: "JSONEachRow", query_params: params })).json();
  out.csv = await (await client.query({ query: pages, format: "CSVWithNames", query_params: params })).text();
  const rs = await client.query({ query: "SELECT number AS n FROM numbers({n:UInt32})", format: "JSONEachRow", query_params: { n: 5 } });
  out.queryId = rs.query_id.length > 0;
  out.stream = [];
  for await (const rows of rs.stream()) {
    for (const row of rows) out.stream.push(row.json().n);
  }
  try {
    await client.insert({ table: "views_raw", values: [{ site: "evil.example" }], format: "JSONEachRow" });
    out.insert = "succeeded";
  } catch (e) {
    out.insert = { code: e.code, type: e.type };
  }
  try {
    await client.command({ query: "DROP TABLE views_raw" });
    out.drop = "succeeded";
  } catch (e) {
    out.drop = { code: e.code, type: e.type };
  }
  out.count = (await (await client.query({ query: "SELECT count() AS c FROM views_raw", format: "JSONEachRow" })).json())[0].c;
  const bad = createClient({ url, username: "analyst", password: "wrong", database: db });
  try {
    await bad.query({ query: "SELECT 1" });
    out.auth = "succeeded";
  } catch (e) {
    out.auth = { code: e.code, type: e.type };
  }
  await bad.close();
  await client.close();
  console.log(JSON.stringify(out));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
