package dev.atrium.kernel.internal.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class EnvelopeChecksTest {

    @ParameterizedTest
    @ValueSource(
            strings = {
                "/api/%2e%2e/x",
                "/api/.%2E/x",
                "/api/%2f",
                "/api/%5C",
                "/api/%25",
                "/api/%u002e",
                "/api/%zz",
                "/api/%",
                "/api/%c3%28",
                "/api/%ed%a0%80",
                "/api/%c0%ae",
                "/api/%0a",
                "/api/%7F",
                "/api//x",
                "/api/./x",
                "/api/..",
                "/api/x;y",
                "/api/%3B",
                "/api/a\\b",
                "relative",
                ""
            })
    void ambiguousPathsAreRefused(String path) {
        assertNotNull(UriCheck.pathProblem(path), path);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "/api/spaces",
                "/api/repos/rep_1/blob/main/dir/file.txt",
                "/api/sp%61ces",
                "/api/%C3%A9t%C3%A9",
                "/",
                "/api/a.b/..c/c..",
                "/api/x/"
            })
    void ordinaryPathsPass(String path) {
        assertNull(UriCheck.pathProblem(path), path);
    }

    @Test
    void decodedPathsAreWhatJettyRoutesOn() {
        assertEquals("/api/spaces", UriCheck.decodedPath("/ap%69/spaces"));
    }

    @Test
    void charsetsOtherThanUtf8AreRefused() {
        assertNull(BodyCheck.charsetProblem("application/json"));
        assertNull(BodyCheck.charsetProblem("application/json; charset=UTF-8"));
        assertNull(BodyCheck.charsetProblem("application/json;charset=\"utf-8\""));
        assertNotNull(BodyCheck.charsetProblem("application/json; charset=bogus"));
        assertNotNull(BodyCheck.charsetProblem("application/json; charset=latin1"));
        assertNotNull(BodyCheck.charsetProblem("application/json; charset"));
    }

    @Test
    void textBodiesAreStrictUtf8WithoutNulOrLoneSurrogates() {
        assertNull(BodyCheck.problem(bytes("{\"a\":\"é \\ud83d\\ude00\"}"), BodyCheck.Kind.JSON));
        assertNotNull(BodyCheck.problem(bytes("{\"a\":\"\\u0000\"}"), BodyCheck.Kind.JSON));
        assertNotNull(BodyCheck.problem(bytes("{\"\\u0000\":1}"), BodyCheck.Kind.JSON));
        assertNotNull(BodyCheck.problem(bytes("[[{\"a\":[\"\\udfff\"]}]]"), BodyCheck.Kind.JSON));
        assertNotNull(
                BodyCheck.problem(bytes("{\"a\":\"\\ud800x\"}"), BodyCheck.Kind.TEXT),
                "JSON in a text/plain body is checked too");
        assertNotNull(BodyCheck.problem(new byte[] {'a', 0, 'b'}, BodyCheck.Kind.TEXT));
        assertNotNull(BodyCheck.problem(new byte[] {(byte) 0xe9}, BodyCheck.Kind.JSON));
        assertNull(
                BodyCheck.problem(bytes("{not json"), BodyCheck.Kind.JSON),
                "malformed JSON is the route's to describe");
        assertNull(BodyCheck.problem(bytes("a=b+c&d=%C3%A9"), BodyCheck.Kind.FORM));
        assertNotNull(BodyCheck.problem(bytes("a=%00"), BodyCheck.Kind.FORM));
        assertNotNull(BodyCheck.problem(bytes("a=%ED%A0%80"), BodyCheck.Kind.FORM));
        assertNotNull(BodyCheck.problem(bytes("a=%G0"), BodyCheck.Kind.FORM));
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
