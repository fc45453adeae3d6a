package dev.atrium.people.internal;

import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The relations between Principals (follows, follow requests, blocks, mutes) and the profile fields people adds to
 * the kernel's (bio, website), in the tables this bundle owns. It decides nothing about who may see what: the
 * resources do, through {@link People}.
 */
@Component(service = PeopleStore.class)
public class PeopleStore {

    /** A block in either direction between {@code ?} and {@code ?}, for the WHERE of a statement. */
    static final String BLOCKED_EITHER_WAY = "EXISTS (SELECT 1 FROM people_blocks b WHERE (b.blocker_id = ? AND "
            + "b.blocked_id = ?) OR (b.blocker_id = ? AND b.blocked_id = ?))";

    record Extra(String bio, String website) {
        static final Extra NONE = new Extra("", "");
    }

    record FollowRequest(String id, String requesterId, String targetId, Instant createdAt) {}

    /** One Principal of a follow list, with when the follow began. */
    record Related(String principalId, Instant since) {}

    final Sql sql;

    @Activate
    public PeopleStore(
            @Reference DataSource dataSource, @Reference SchemaMigrations migrations, BundleContext context) {
        this.sql = new Sql(dataSource);
        migrations.apply(context.getBundle());
    }

    Extra extra(String principalId) {
        return sql.one(
                        "SELECT bio, website FROM people_profiles WHERE principal_id = ?",
                        rs -> new Extra(rs.getString("bio"), rs.getString("website")),
                        principalId)
                .orElse(Extra.NONE);
    }

    void saveExtra(String principalId, String bio, String website) {
        sql.update(
                "INSERT INTO people_profiles (principal_id, bio, website) VALUES (?, coalesce(?, ''), coalesce(?, '')) "
                        + "ON CONFLICT (principal_id) DO UPDATE SET bio = coalesce(?, people_profiles.bio), "
                        + "website = coalesce(?, people_profiles.website), updated_at = now()",
                principalId,
                bio,
                website,
                bio,
                website);
    }

    // ---------------------------------------------------------------- follows

    boolean follows(String followerId, String followeeId) {
        return sql.count(
                        "SELECT count(*) FROM people_follows WHERE follower_id = ? AND followee_id = ?",
                        followerId,
                        followeeId)
                > 0;
    }

    /**
     * Makes the follow unless a block stands between the two (checked in the same statement, so a block that lands at
     * the same time wins); true when a new follow was made, false when it existed or a block refused it.
     */
    boolean follow(String followerId, String followeeId) {
        return sql.update(
                        "INSERT INTO people_follows (follower_id, followee_id) SELECT ?, ? WHERE NOT "
                                + BLOCKED_EITHER_WAY + " ON CONFLICT DO NOTHING",
                        followerId,
                        followeeId,
                        followerId,
                        followeeId,
                        followeeId,
                        followerId)
                > 0;
    }

    /** Removes the follow and a pending request of the follower; true when either existed. */
    boolean unfollow(String followerId, String followeeId) {
        return sql.tx(c -> Sql.update(
                                c,
                                "DELETE FROM people_follows WHERE follower_id = ? AND followee_id = ?",
                                followerId,
                                followeeId)
                        + Sql.update(
                                c,
                                "DELETE FROM people_follow_requests WHERE requester_id = ? AND target_id = ?",
                                followerId,
                                followeeId)
                > 0);
    }

    /** Followers of {@code principalId} ({@code followers}) or whom it follows, newest first, without anyone blocked by or blocking {@code viewerId}. */
    List<Related> related(String principalId, boolean followers, String viewerId, int limit, int offset) {
        String self = followers ? "f.followee_id" : "f.follower_id";
        String other = followers ? "f.follower_id" : "f.followee_id";
        return sql.list(
                "SELECT " + other + " AS other, f.created_at FROM people_follows f WHERE " + self + " = ? "
                        + "AND NOT EXISTS (SELECT 1 FROM people_blocks b WHERE (b.blocker_id = ? AND b.blocked_id = "
                        + other + ") OR (b.blocked_id = ? AND b.blocker_id = " + other + ")) "
                        + "ORDER BY f.created_at DESC, " + other + " LIMIT ? OFFSET ?",
                rs -> new Related(rs.getString("other"), Sql.instant(rs, "created_at")),
                principalId,
                viewerId == null ? "" : viewerId,
                viewerId == null ? "" : viewerId,
                limit,
                offset);
    }

    long countRelated(String principalId, boolean followers, String viewerId) {
        String self = followers ? "f.followee_id" : "f.follower_id";
        String other = followers ? "f.follower_id" : "f.followee_id";
        return sql.count(
                "SELECT count(*) FROM people_follows f WHERE " + self + " = ? "
                        + "AND NOT EXISTS (SELECT 1 FROM people_blocks b WHERE (b.blocker_id = ? AND b.blocked_id = "
                        + other + ") OR (b.blocked_id = ? AND b.blocker_id = " + other + "))",
                principalId,
                viewerId == null ? "" : viewerId,
                viewerId == null ? "" : viewerId);
    }

    // ---------------------------------------------------------------- follow requests

    /** The pending request, made when there is none and no block stands between the two; empty when a block refused it. */
    Optional<FollowRequest> request(String requesterId, String targetId) {
        return sql.tx(c -> {
            Sql.update(
                    c,
                    "INSERT INTO people_follow_requests (id, requester_id, target_id) SELECT ?, ?, ? WHERE NOT "
                            + BLOCKED_EITHER_WAY + " ON CONFLICT (requester_id, target_id) DO NOTHING",
                    Ids.id("frq"),
                    requesterId,
                    targetId,
                    requesterId,
                    targetId,
                    targetId,
                    requesterId);
            return Sql.one(
                    c,
                    "SELECT * FROM people_follow_requests WHERE requester_id = ? AND target_id = ?",
                    PeopleStore::followRequest,
                    requesterId,
                    targetId);
        });
    }

    boolean requested(String requesterId, String targetId) {
        return sql.count(
                        "SELECT count(*) FROM people_follow_requests WHERE requester_id = ? AND target_id = ?",
                        requesterId,
                        targetId)
                > 0;
    }

    List<FollowRequest> requestsTo(String targetId, int limit, int offset) {
        return sql.list(
                "SELECT * FROM people_follow_requests WHERE target_id = ? ORDER BY created_at DESC, id LIMIT ? OFFSET ?",
                PeopleStore::followRequest,
                targetId,
                limit,
                offset);
    }

    long countRequestsTo(String targetId) {
        return sql.count("SELECT count(*) FROM people_follow_requests WHERE target_id = ?", targetId);
    }

    /**
     * Takes the request {@code id} addressed to {@code targetId} away, and makes the follow when {@code accept} (unless a
     * block came between); empty when there is no such request.
     */
    Optional<FollowRequest> decide(String targetId, String id, boolean accept) {
        return sql.tx(c -> {
            Optional<FollowRequest> taken = Sql.one(
                    c,
                    "DELETE FROM people_follow_requests WHERE id = ? AND target_id = ? RETURNING *",
                    PeopleStore::followRequest,
                    id,
                    targetId);
            if (taken.isPresent() && accept) {
                String requester = taken.get().requesterId();
                Sql.update(
                        c,
                        "INSERT INTO people_follows (follower_id, followee_id) SELECT ?, ? WHERE NOT "
                                + BLOCKED_EITHER_WAY + " ON CONFLICT DO NOTHING",
                        requester,
                        targetId,
                        requester,
                        targetId,
                        targetId,
                        requester);
            }
            return taken;
        });
    }

    // ---------------------------------------------------------------- blocks and mutes

    /** Blocks, and removes follows and follow requests in both directions in the same transaction. */
    void block(String blockerId, String blockedId) {
        sql.tx(c -> {
            Sql.update(
                    c,
                    "INSERT INTO people_blocks (blocker_id, blocked_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
                    blockerId,
                    blockedId);
            Sql.update(
                    c,
                    "DELETE FROM people_follows WHERE (follower_id = ? AND followee_id = ?) "
                            + "OR (follower_id = ? AND followee_id = ?)",
                    blockerId,
                    blockedId,
                    blockedId,
                    blockerId);
            Sql.update(
                    c,
                    "DELETE FROM people_follow_requests WHERE (requester_id = ? AND target_id = ?) "
                            + "OR (requester_id = ? AND target_id = ?)",
                    blockerId,
                    blockedId,
                    blockedId,
                    blockerId);
            return null;
        });
    }

    void unblock(String blockerId, String blockedId) {
        sql.update("DELETE FROM people_blocks WHERE blocker_id = ? AND blocked_id = ?", blockerId, blockedId);
    }

    boolean blocks(String blockerId, String blockedId) {
        return sql.count(
                        "SELECT count(*) FROM people_blocks WHERE blocker_id = ? AND blocked_id = ?",
                        blockerId,
                        blockedId)
                > 0;
    }

    void mute(String muterId, String mutedId) {
        sql.update(
                "INSERT INTO people_mutes (muter_id, muted_id) VALUES (?, ?) ON CONFLICT DO NOTHING", muterId, mutedId);
    }

    void unmute(String muterId, String mutedId) {
        sql.update("DELETE FROM people_mutes WHERE muter_id = ? AND muted_id = ?", muterId, mutedId);
    }

    boolean mutes(String muterId, String mutedId) {
        return sql.count("SELECT count(*) FROM people_mutes WHERE muter_id = ? AND muted_id = ?", muterId, mutedId) > 0;
    }

    private static FollowRequest followRequest(java.sql.ResultSet rs) throws java.sql.SQLException {
        return new FollowRequest(
                rs.getString("id"),
                rs.getString("requester_id"),
                rs.getString("target_id"),
                Sql.instant(rs, "created_at"));
    }
}
