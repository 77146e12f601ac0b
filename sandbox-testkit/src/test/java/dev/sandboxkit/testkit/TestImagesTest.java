package dev.sandboxkit.testkit;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerClientImpl;
import com.github.dockerjava.zerodep.ZerodepDockerHttpClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Local test images: content hashing, the static-busybox check, and real builds on the local engine. */
class TestImagesTest {

    @Nested
    @DisplayName("content hash")
    class ContentHash {
        @Test
        @DisplayName("is the same for the same files anywhere, and changes with content, names and the exec bit")
        void hash(@TempDir Path a, @TempDir Path b) throws IOException {
            Files.writeString(a.resolve("Dockerfile"), "FROM scratch\n");
            Files.createDirectories(a.resolve("sub"));
            Files.writeString(a.resolve("sub/file.txt"), "one");
            Files.writeString(b.resolve("Dockerfile"), "FROM scratch\n");
            Files.createDirectories(b.resolve("sub"));
            Files.writeString(b.resolve("sub/file.txt"), "one");
            String original = TestImages.contextHash(a);

            assertThat(original).hasSize(64).isEqualTo(TestImages.contextHash(b));

            Files.writeString(b.resolve("sub/file.txt"), "two");
            String changedContent = TestImages.contextHash(b);
            Files.writeString(b.resolve("sub/file.txt"), "one");
            assertThat(TestImages.contextHash(b)).isEqualTo(original);
            Files.setPosixFilePermissions(b.resolve("sub/file.txt"), PosixFilePermissions.fromString("rwxr-xr-x"));
            String changedMode = TestImages.contextHash(b);
            Files.setPosixFilePermissions(b.resolve("sub/file.txt"), PosixFilePermissions.fromString("rw-r--r--"));
            Files.move(b.resolve("sub/file.txt"), b.resolve("sub/other.txt"));
            String changedName = TestImages.contextHash(b);

            assertThat(changedContent).isNotEqualTo(original);
            assertThat(changedMode).isNotEqualTo(original);
            assertThat(changedName).isNotEqualTo(original);
        }
    }

    @Nested
    @DisplayName("static busybox check")
    class StaticCheck {
        @Test
        @DisplayName("accepts the host's static busybox")
        void acceptsStatic() {
            TestImages.requireStaticBusybox(Path.of("/bin/busybox"));
        }

        @Test
        @DisplayName("rejects a dynamically linked binary, naming the package to install")
        void rejectsDynamic() {
            Path java = Path.of(System.getProperty("java.home"), "bin", "java");
            assertThatThrownBy(() -> TestImages.requireStaticBusybox(java))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("dynamically linked").hasMessageContaining("apt-get install busybox-static");
        }

        @Test
        @DisplayName("rejects a missing file or one that is not ELF")
        void rejectsMissingAndNonElf(@TempDir Path dir) throws IOException {
            Path text = Files.writeString(dir.resolve("busybox"), "#!/bin/sh\necho not elf\n");
            assertThatThrownBy(() -> TestImages.requireStaticBusybox(dir.resolve("nope")))
                    .hasMessageContaining("no busybox at").hasMessageContaining("busybox-static");
            assertThatThrownBy(() -> TestImages.requireStaticBusybox(text)).hasMessageContaining("not an ELF");
        }
    }

    @Nested
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    @DisplayName("building on the local engine")
    class Building {
        private DockerClient docker;

        @BeforeAll
        void connect() {
            DefaultDockerClientConfig config = DefaultDockerClientConfig.createDefaultConfigBuilder()
                    .withDockerHost(SandboxExtension.dockerEndpoint()).build();
            docker = DockerClientImpl.getInstance(config, new ZerodepDockerHttpClient.Builder()
                    .dockerHost(URI.create(SandboxExtension.dockerEndpoint())).build());
        }

        @AfterAll
        void disconnect() throws IOException {
            docker.close();
        }

        @Test
        @DisplayName("busybox() builds a FROM-scratch image once and returns the same tag after")
        void busybox() {
            String image = TestImages.busybox();
            String again = TestImages.busybox();

            assertThat(image).matches(TestImages.BUSYBOX_REPOSITORY + ":[0-9a-f]{12}").isEqualTo(again);
            assertThat(docker.inspectImageCmd(image).exec().getId()).startsWith("sha256:");
        }

        @Test
        @DisplayName("fromDockerfile tags by content hash and reuses an image that exists")
        void fromDockerfile(@TempDir Path context) throws IOException {
            Files.writeString(context.resolve("Dockerfile"), "FROM scratch\nCOPY hello.txt /hello.txt\n");
            Files.writeString(context.resolve("hello.txt"), "sandboxkit testkit fixture\n");
            String expected = "sandboxkit-testkit-fixture:" + TestImages.contextHash(context).substring(0, 12);

            String image = TestImages.fromDockerfile(context, "sandboxkit-testkit-fixture");
            String created = docker.inspectImageCmd(image).exec().getCreated();

            assertThat(image).isEqualTo(expected);
            assertThat(TestImages.fromDockerfile(context, "sandboxkit-testkit-fixture")).isEqualTo(image);
            assertThat(docker.inspectImageCmd(image).exec().getCreated()).isEqualTo(created);
        }

        @Test
        @DisplayName("rejects a context without a Dockerfile and an invalid repository name")
        void rejectsBadInput(@TempDir Path context) {
            assertThatThrownBy(() -> TestImages.fromDockerfile(context, "ok"))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no Dockerfile");
            assertThatThrownBy(() -> TestImages.fromDockerfile(context, "Upper:Case"))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("repository");
        }
    }
}
