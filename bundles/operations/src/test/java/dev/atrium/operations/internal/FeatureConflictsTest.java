package dev.atrium.operations.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Features that serve the same paths ({@code "atrium-conflicts"}) never run together; one may be off by default. */
class FeatureConflictsTest {

    private static final Feature A = new Feature("store-inventory", "", List.of(), List.of(), true);
    private static final Feature B = new Feature("store-pullonly", "", List.of(), List.of("store-inventory"), false);
    private static final Feature M = new Feature("memories", "", List.of());
    private static final Map<String, Feature> ALL = Map.of(A.name(), A, B.name(), B, M.name(), M);

    @Test
    void theRelationHoldsBothWaysWhicheverFileNamesIt() {
        assertTrue(A.conflictsWith(B));
        assertTrue(B.conflictsWith(A));
        assertTrue(!A.conflictsWith(M) && !M.conflictsWith(B) && !A.conflictsWith(A));
    }

    @Test
    void aFeatureOffByDefaultStaysOffUntilTheStateFileEnablesIt() {
        assertEquals(Set.of("store-pullonly"), FeatureSwitch.initiallyDisabled(ALL, Set.of(), Set.of()));
        assertEquals(
                Set.of("store-inventory"),
                FeatureSwitch.initiallyDisabled(ALL, Set.of("store-inventory"), Set.of("store-pullonly")));
        assertEquals(
                Set.of("memories", "store-pullonly"),
                FeatureSwitch.initiallyDisabled(ALL, Set.of("memories"), Set.of()));
    }

    @Test
    void twoConflictingFeaturesLeftOnAreNeverStartedTogether() {
        // the file enables the default-off one without disabling the other: the default-off one loses
        assertEquals(
                Set.of("store-pullonly"), FeatureSwitch.initiallyDisabled(ALL, Set.of(), Set.of("store-pullonly")));
        Feature x = new Feature("x", "", List.of(), List.of("y"), true);
        Feature y = new Feature("y", "", List.of(), List.of(), true);
        assertEquals(Set.of("y"), FeatureSwitch.initiallyDisabled(Map.of("x", x, "y", y), Set.of(), Set.of()));
    }

    @Test
    void enablingOneWhileTheOtherIsOnNamesTheOther() {
        assertEquals(
                Optional.of("store-inventory"),
                FeatureSwitch.enabledConflict(ALL, Set.of("store-pullonly"), "store-pullonly"));
        assertEquals(
                Optional.empty(),
                FeatureSwitch.enabledConflict(ALL, Set.of("store-pullonly", "store-inventory"), "store-pullonly"));
        assertEquals(Optional.empty(), FeatureSwitch.enabledConflict(ALL, Set.of("memories"), "memories"));
    }
}
