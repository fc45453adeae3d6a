package dev.atrium.actions.internal.workflow;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** The syntax tree of an expression; each node evaluates itself under GitHub's rules ({@link Values}). */
final class ExpressionNodes {

    private ExpressionNodes() {}

    record Literal(Object value) implements Expression {
        @Override
        public Object evaluate(Context context) {
            return value;
        }

        @Override
        public boolean callsStatusFunction() {
            return false;
        }

        @Override
        public Set<String> contexts() {
            return Set.of();
        }
    }

    record Named(String name) implements Expression {
        @Override
        public Object evaluate(Context context) {
            return context.named(name);
        }

        @Override
        public boolean callsStatusFunction() {
            return false;
        }

        @Override
        public Set<String> contexts() {
            return Set.of(name);
        }
    }

    record Index(Expression target, Expression key) implements Expression {
        @Override
        public Object evaluate(Context context) {
            return Values.index(target.evaluate(context), key.evaluate(context));
        }

        @Override
        public boolean callsStatusFunction() {
            return target.callsStatusFunction() || key.callsStatusFunction();
        }

        @Override
        public Set<String> contexts() {
            return union(List.of(target, key));
        }
    }

    record Not(Expression operand) implements Expression {
        @Override
        public Object evaluate(Context context) {
            return !Values.truthy(operand.evaluate(context));
        }

        @Override
        public boolean callsStatusFunction() {
            return operand.callsStatusFunction();
        }

        @Override
        public Set<String> contexts() {
            return operand.contexts();
        }
    }

    enum Op {
        AND,
        OR,
        EQ,
        NE,
        LT,
        LE,
        GT,
        GE
    }

    record Binary(Op op, Expression left, Expression right) implements Expression {
        @Override
        public Object evaluate(Context context) {
            Object l = left.evaluate(context);
            // && and || return an operand, not a boolean, and short-circuit, as in GitHub
            if (op == Op.AND) {
                return Values.truthy(l) ? right.evaluate(context) : l;
            }
            if (op == Op.OR) {
                return Values.truthy(l) ? l : right.evaluate(context);
            }
            Object r = right.evaluate(context);
            if (op == Op.EQ) {
                return Values.looseEquals(l, r);
            }
            if (op == Op.NE) {
                return !Values.looseEquals(l, r);
            }
            Integer c = Values.compare(l, r);
            if (c == null) {
                return false;
            }
            return switch (op) {
                case LT -> c < 0;
                case LE -> c <= 0;
                case GT -> c > 0;
                default -> c >= 0;
            };
        }

        @Override
        public boolean callsStatusFunction() {
            return left.callsStatusFunction() || right.callsStatusFunction();
        }

        @Override
        public Set<String> contexts() {
            return union(List.of(left, right));
        }
    }

    record Call(String function, List<Expression> args) implements Expression {
        Call {
            args = List.copyOf(args);
        }

        @Override
        public Object evaluate(Context context) {
            return ExpressionFunctions.call(function, args, context);
        }

        @Override
        public boolean callsStatusFunction() {
            return ExpressionFunctions.STATUS.contains(function)
                    || args.stream().anyMatch(Expression::callsStatusFunction);
        }

        @Override
        public Set<String> contexts() {
            return union(args);
        }
    }

    static Set<String> union(List<Expression> parts) {
        Set<String> all = new HashSet<>();
        for (Expression e : parts) {
            all.addAll(e.contexts());
        }
        return Set.copyOf(all);
    }
}
