package dev.sandboxkit.readme.bare;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * An application that has the starter and nothing of its own: what a new user starts with. Its package keeps the
 * README example's beans out of its component scan, so it also runs on the starter's class path alone.
 */
@SpringBootApplication
public class StarterOnlyApplication {

    /** Created by Spring. */
    public StarterOnlyApplication() {
    }

    /**
     * Starts the application; it ends when {@code main} returns (nothing keeps it alive), closing the context.
     *
     * @param args Spring Boot arguments, for example {@code --sandboxkit.idle-timeout=10m}
     */
    public static void main(String[] args) {
        SpringApplication.run(StarterOnlyApplication.class, args);
    }
}
