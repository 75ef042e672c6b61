// A stand-in for a person's browser in the login tests, as `$BROWSER` names it:
//
//   node tests/peers/headless-browser.mjs URL
//
// It opens URL and follows each redirect as a browser would (an authorization server that
// approves at once redirects to the client's loopback callback), printing each address it
// visits on stderr. It exits 0 once a page answers without redirecting, 1 on an error status.
let url = process.argv[2];
for (let hop = 0; hop < 20; hop++) {
  console.error(`headless-browser: GET ${url}`);
  const response = await fetch(url, { redirect: "manual" });
  const location = response.headers.get("location");
  if (response.status >= 300 && response.status < 400 && location) {
    url = new URL(location, url).toString();
    continue;
  }
  process.exit(response.ok ? 0 : 1);
}
console.error("headless-browser: too many redirects");
process.exit(1);
