package dev.atrium.actions.internal.workflow;

import dev.atrium.actions.internal.workflow.ExpressionNodes.Binary;
import dev.atrium.actions.internal.workflow.ExpressionNodes.Call;
import dev.atrium.actions.internal.workflow.ExpressionNodes.Index;
import dev.atrium.actions.internal.workflow.ExpressionNodes.Literal;
import dev.atrium.actions.internal.workflow.ExpressionNodes.Named;
import dev.atrium.actions.internal.workflow.ExpressionNodes.Not;
import dev.atrium.actions.internal.workflow.ExpressionNodes.Op;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Recursive descent over GitHub's grammar. Precedence, loosest first: {@code ||}, {@code &&}, {@code == !=},
 * {@code < <= > >=}, {@code !}, then {@code . []} and calls.
 */
final class ExpressionParser {

    private static final int MAX_DEPTH = 50;

    private final String text;
    private final int offset;
    private int pos;
    private int depth;

    private ExpressionParser(String text, int offset) {
        this.text = text;
        this.offset = offset;
    }

    /** Parses {@code text}; positions in exceptions are offset by {@code offset} (where it sits in a larger text). */
    static Expression parse(String text, int offset) {
        ExpressionParser p = new ExpressionParser(text, offset);
        p.skipSpace();
        if (p.pos >= text.length()) {
            throw p.error("empty expression");
        }
        Expression e = p.or();
        p.skipSpace();
        if (p.pos < text.length()) {
            throw p.error("unexpected '" + text.charAt(p.pos) + "'");
        }
        return e;
    }

    private ExpressionException error(String message) {
        return new ExpressionException(message + " at position " + (offset + pos + 1), offset + pos);
    }

    private void skipSpace() {
        while (pos < text.length() && Character.isWhitespace(text.charAt(pos))) {
            pos++;
        }
    }

    private boolean eat(String token) {
        skipSpace();
        if (text.startsWith(token, pos)) {
            pos += token.length();
            return true;
        }
        return false;
    }

    private Expression or() {
        Expression left = and();
        while (eat("||")) {
            left = new Binary(Op.OR, left, and());
        }
        return left;
    }

    private Expression and() {
        Expression left = equality();
        while (eat("&&")) {
            left = new Binary(Op.AND, left, equality());
        }
        return left;
    }

    private Expression equality() {
        Expression left = comparison();
        while (true) {
            if (eat("==")) {
                left = new Binary(Op.EQ, left, comparison());
            } else if (eat("!=")) {
                left = new Binary(Op.NE, left, comparison());
            } else {
                return left;
            }
        }
    }

    private Expression comparison() {
        Expression left = unary();
        while (true) {
            if (eat("<=")) {
                left = new Binary(Op.LE, left, unary());
            } else if (eat(">=")) {
                left = new Binary(Op.GE, left, unary());
            } else if (eat("<")) {
                left = new Binary(Op.LT, left, unary());
            } else if (eat(">")) {
                left = new Binary(Op.GT, left, unary());
            } else {
                return left;
            }
        }
    }

    private Expression unary() {
        skipSpace();
        if (pos < text.length() && text.charAt(pos) == '!' && !text.startsWith("!=", pos)) {
            pos++;
            nest();
            Expression operand = unary();
            depth--;
            return new Not(operand);
        }
        return postfix();
    }

    private void nest() {
        if (++depth > MAX_DEPTH) {
            throw error("expression nested too deeply");
        }
    }

    private Expression postfix() {
        Expression e = primary();
        while (true) {
            skipSpace();
            if (eat(".")) {
                skipSpace();
                if (pos < text.length() && text.charAt(pos) == '*') {
                    throw error("object filter '.*' is not supported");
                }
                String name = identifier();
                if (name == null) {
                    throw error("property name expected after '.'");
                }
                e = new Index(e, new Literal(name));
            } else if (eat("[")) {
                skipSpace();
                if (pos < text.length() && text.charAt(pos) == '*') {
                    throw error("object filter '[*]' is not supported");
                }
                nest();
                Expression key = or();
                depth--;
                if (!eat("]")) {
                    throw error("']' expected");
                }
                e = new Index(e, key);
            } else {
                return e;
            }
        }
    }

    private String identifier() {
        int start = pos;
        if (pos < text.length() && (Character.isLetter(text.charAt(pos)) || text.charAt(pos) == '_')) {
            pos++;
            while (pos < text.length()) {
                char c = text.charAt(pos);
                if (Character.isLetterOrDigit(c) || c == '_' || c == '-') {
                    pos++;
                } else {
                    break;
                }
            }
            return text.substring(start, pos);
        }
        return null;
    }

    private Expression primary() {
        skipSpace();
        if (pos >= text.length()) {
            throw error("unexpected end of expression");
        }
        char c = text.charAt(pos);
        if (c == '(') {
            pos++;
            nest();
            Expression inner = or();
            depth--;
            if (!eat(")")) {
                throw error("')' expected");
            }
            return inner;
        }
        if (c == '\'') {
            return new Literal(string());
        }
        if (Character.isDigit(c) || c == '-' || c == '+' || c == '.') {
            return new Literal(number());
        }
        int start = pos;
        String name = identifier();
        if (name == null) {
            throw error("unexpected '" + c + "'");
        }
        skipSpace();
        if (pos < text.length() && text.charAt(pos) == '(') {
            return call(name, start);
        }
        Expression keyword = switch (name) {
            case "true" -> new Literal(true);
            case "false" -> new Literal(false);
            case "null" -> new Literal(null);
            case "NaN" -> new Literal(Double.NaN);
            case "Infinity" -> new Literal(Double.POSITIVE_INFINITY);
            default -> null;
        };
        if (keyword != null) {
            return keyword;
        }
        String lower = name.toLowerCase(Locale.ROOT);
        if (!Context.NAMES.contains(lower)) {
            pos = start;
            throw error("unrecognized named-value '" + name + "' (contexts: " + String.join(", ", sortedNames()) + ")");
        }
        return new Named(lower);
    }

    private static List<String> sortedNames() {
        return Context.NAMES.stream().sorted().toList();
    }

    private Expression call(String name, int start) {
        pos++; // (
        nest();
        List<Expression> args = new ArrayList<>();
        if (!eat(")")) {
            do {
                args.add(or());
            } while (eat(","));
            if (!eat(")")) {
                throw error("')' or ',' expected in call of '" + name + "'");
            }
        }
        depth--;
        String canonical;
        try {
            canonical = ExpressionFunctions.check(name, args.size(), offset + start);
        } catch (ExpressionException e) {
            throw new ExpressionException(e.getMessage() + " at position " + (offset + start + 1), e.position());
        }
        return new Call(canonical, args);
    }

    private String string() {
        StringBuilder out = new StringBuilder();
        pos++; // opening quote
        while (pos < text.length()) {
            char c = text.charAt(pos++);
            if (c == '\'') {
                if (pos < text.length() && text.charAt(pos) == '\'') {
                    out.append('\'');
                    pos++;
                } else {
                    return out.toString();
                }
            } else {
                out.append(c);
            }
        }
        throw error("unterminated string");
    }

    private Object number() {
        int start = pos;
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (Character.isLetterOrDigit(c) || c == '.' || c == '-' || c == '+') {
                // a sign only begins the number or follows an exponent
                if ((c == '-' || c == '+') && pos > start && Character.toLowerCase(text.charAt(pos - 1)) != 'e') {
                    break;
                }
                pos++;
            } else {
                break;
            }
        }
        String literal = text.substring(start, pos);
        double d = Values.toNumber(literal);
        if (Double.isNaN(d) || literal.isBlank()) {
            pos = start;
            throw error("invalid number '" + literal + "'");
        }
        return d;
    }
}
