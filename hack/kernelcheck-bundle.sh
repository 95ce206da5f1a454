#!/usr/bin/env bash
# Builds .device/ (gitignored): a self-contained `kernelcheck` for a GPU machine that has the NVIDIA driver but no
# Java or Maven (e.g. the lent H200): a jlinked JRE 17, the runtime's classes, the kernels jar (with tl_model.fatbin),
# JCuda and picocli, and .device/kernelcheck.sh. Carry .device to the GPU machine and run:
#   .device/kernelcheck.sh [--dtypes bf16,fp16] [--device 0] [--seed N]
# Prints one line per case 'kernel dtype case maxAbsErr maxRelErr PASS|FAIL', then 'kernelcheck: N passed, M failed';
# exit 0 only when every case passed (1: a case failed, 5: no GPU / CUDA error). About 46 MB.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mvn -B -o -q -pl kernels install -DskipTests
mvn -B -o -q -pl runtime-image compile -Dtensorlane.skipImages
mvn -B -o -q -pl runtime-image dependency:build-classpath -Dmdep.outputFile=target/kernelcheck.cp >/dev/null
out=.device
rm -rf "$out/jre" "$out/lib" "$out/app" "$out/classes" "$out/kernelcheck.sh"
mkdir -p "$out/lib" "$out/classes"
jlink --add-modules java.base,java.logging,jdk.unsupported,java.management,java.naming --strip-debug --no-header-files \
  --no-man-pages --compress=2 --output "$out/jre"
tr ':' '\n' < runtime-image/target/kernelcheck.cp | grep -E 'tensorlane-kernels|org/jcuda/jcuda/|jcuda-natives|picocli' \
  | xargs -I{} cp {} "$out/lib/"
cp -r runtime-image/target/classes "$out/app"
cat > "$out/classes/KernelCheckMain.java" <<'JAVA'
import picocli.CommandLine;

/** Runs KernelCheckCommand with the CLI's own exception handling (Main.handle), whether or not Main registers it. */
public class KernelCheckMain {
  public static void main(String[] args) throws Exception {
    CommandLine cl = new CommandLine(new io.tensorlane.runtime.cli.KernelCheckCommand());
    java.lang.reflect.Method h = io.tensorlane.runtime.cli.Main.class.getDeclaredMethod("handle", Exception.class, CommandLine.class);
    h.setAccessible(true);
    cl.setExecutionExceptionHandler((ex, cmd, parsed) -> (int) h.invoke(null, ex, cmd));
    System.exit(cl.execute(args));
  }
}
JAVA
cp_line="$out/app:$(ls "$out"/lib/*.jar | tr '\n' ':')"
javac -d "$out/classes" -cp "$cp_line" "$out/classes/KernelCheckMain.java"
cat > "$out/kernelcheck.sh" <<'SH'
#!/usr/bin/env bash
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/jre/bin/java" -cp "$here/classes:$here/app:$(ls "$here"/lib/*.jar | tr '\n' ':')" KernelCheckMain "$@"
SH
chmod +x "$out/kernelcheck.sh"
echo "built $out ($(du -sh "$out" | cut -f1)); on the GPU machine: $out/kernelcheck.sh"
