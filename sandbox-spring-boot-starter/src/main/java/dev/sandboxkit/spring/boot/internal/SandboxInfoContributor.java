package dev.sandboxkit.spring.boot.internal;

import dev.sandboxkit.ManagerStats;
import dev.sandboxkit.SandboxManager;
import org.springframework.boot.actuate.info.Info;
import org.springframework.boot.actuate.info.InfoContributor;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Adds {@code sandboxkit} to {@code /actuator/info}: the manager's driver and instance id, what it holds now
 * (active containers, suspended sessions, pooled sandboxes) and what it has done since it started. Read from
 * {@link SandboxManager#stats()}, which never touches the engine.
 */
public final class SandboxInfoContributor implements InfoContributor {
    private final SandboxManager manager;

    /**
     * Creates the contributor.
     *
     * @param manager the manager
     */
    public SandboxInfoContributor(SandboxManager manager) {
        this.manager = manager;
    }

    @Override
    public void contribute(Info.Builder builder) {
        ManagerStats s = manager.stats();
        Map<String, Object> info = new LinkedHashMap<>();
        info.put("driver", manager.driverName());
        info.put("instanceId", manager.instanceId());
        info.put("started", !(manager instanceof LazySandboxManager lazy) || lazy.started());
        info.put("active", s.active());
        info.put("suspended", s.suspended());
        info.put("pooled", s.poolSize());
        Map<String, Object> totals = new LinkedHashMap<>();
        totals.put("created", s.created());
        totals.put("resumed", s.resumed());
        totals.put("idleReaped", s.idleReaped());
        totals.put("lifetimeKilled", s.lifetimeKilled());
        totals.put("destroyed", s.destroyed());
        totals.put("orphansRemoved", s.orphansRemoved());
        totals.put("poolHits", s.poolHits());
        totals.put("poolMisses", s.poolMisses());
        info.put("totals", totals);
        builder.withDetail("sandboxkit", info);
    }
}
