package dev.atrium.oauth.internal;

/** Small server-rendered pages: consent, device verification and errors. */
final class Html {

    private Html() {}

    static String esc(String s) {
        if (s == null) {
            return "";
        }
        StringBuilder sb = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            switch (ch) {
                case '<' -> sb.append("&lt;");
                case '>' -> sb.append("&gt;");
                case '&' -> sb.append("&amp;");
                case '"' -> sb.append("&quot;");
                case '\'' -> sb.append("&#39;");
                default -> sb.append(ch);
            }
        }
        return sb.toString();
    }

    static String page(String title, String body) {
        return "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\">"
                + "<title>" + esc(title)
                + " - Atrium</title><style>body{font-family:system-ui,sans-serif;max-width:34em;margin:3em auto;"
                + "padding:0 1em;color:#222}button{font-size:1em;padding:.5em 1.2em;margin-right:.5em}ul{line-height:1.6}"
                + ".err{color:#a00}code{background:#eee;padding:0 .2em}</style></head><body>" + body + "</body></html>";
    }

    static String error(String error, String description) {
        return page(
                "Authorization error",
                "<h1>Authorization error</h1><p class=\"err\" id=\"error\">" + esc(error) + "</p><p id=\"description\">"
                        + esc(description)
                        + "</p><p>The application that sent you here is misconfigured; you were not sent back to it.</p>");
    }

    /** The script both pages use: it posts the decision with the session's CSRF token (cookie atrium_csrf). */
    static final String SCRIPT = "<script>function csrf(){var m=document.cookie.match(/(?:^|; )atrium_csrf=([^;]*)/);"
            + "return m?decodeURIComponent(m[1]):''}"
            + "async function post(url,body){var r=await fetch(url,{method:'POST',credentials:'same-origin',headers:{'Content-Type':'application/json',"
            + "'X-CSRF-Token':csrf()},body:JSON.stringify(body)});var j=await r.json();if(!r.ok){document.getElementById('status').textContent="
            + "(j.error&&j.error.message)||'failed';return null}return j}</script>";
}
