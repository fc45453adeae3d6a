package dev.atrium.repos.internal;

import java.io.IOException;
import java.io.InputStream;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.ObjectChecker;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.ObjectInserter;
import org.eclipse.jgit.transport.PackParser;

/**
 * An inserter that runs every tree, commit and tag the server writes itself (JSON commits, archive imports)
 * through the same {@link GitNames#newObjectChecker() fsck checker} as pushed and fetched objects, before it is
 * stored: a {@link org.eclipse.jgit.errors.CorruptObjectException} instead of an object git fsck would refuse.
 */
final class CheckedInserter extends ObjectInserter.Filter {

    private final ObjectInserter delegate;
    private final ObjectChecker checker = GitNames.newObjectChecker();

    CheckedInserter(ObjectInserter delegate) {
        this.delegate = delegate;
    }

    @Override
    protected ObjectInserter delegate() {
        return delegate;
    }

    @Override
    public ObjectId insert(int type, byte[] data) throws IOException {
        return insert(type, data, 0, data.length);
    }

    @Override
    public ObjectId insert(int type, byte[] data, int off, int len) throws IOException {
        if (type != Constants.OBJ_BLOB) {
            byte[] exact = off == 0 && len == data.length ? data : java.util.Arrays.copyOfRange(data, off, off + len);
            checker.check(idFor(type, exact), type, exact);
        }
        return delegate.insert(type, data, off, len);
    }

    @Override
    public ObjectId insert(int type, long length, InputStream in) throws IOException {
        if (type == Constants.OBJ_BLOB) {
            return delegate.insert(type, length, in);
        }
        byte[] data = in.readNBytes((int) Math.min(length, Integer.MAX_VALUE));
        return insert(type, data, 0, data.length);
    }

    @Override
    public PackParser newPackParser(InputStream in) throws IOException {
        PackParser parser = delegate.newPackParser(in);
        parser.setObjectChecker(GitNames.newObjectChecker());
        return parser;
    }
}
