-- wrk script: POST an application/x-www-form-urlencoded body with HTTP Basic client authentication.
-- BENCH_BODY and BENCH_AUTH come from the environment (bench/oauth.sh sets them).
wrk.method = "POST"
wrk.body = os.getenv("BENCH_BODY")
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.headers["Authorization"] = os.getenv("BENCH_AUTH")
