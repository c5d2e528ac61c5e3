import java.io.FileOutputStream;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import org.apache.dubbo.metadata.MetadataInfo;
import org.apache.dubbo.metadata.MetadataInfo.ServiceInfo;
import org.apache.dubbo.metadata.util.MetadataServiceVersionUtils;

/**
 * Writes metadata_info_v2.bin: the MetadataInfoV2 a Dubbo 3.3 provider's MetadataServiceV2 answers
 * for this MetadataInfo (MetadataServiceVersionUtils.toV2, then protobuf-java's toByteArray), for
 * rudder's v2_tests.rs. Run from the repository root, after scripts/peers/build-java-provider.sh:
 *
 *   java -cp "$(cat it/java-provider/target/classpath.txt)" \
 *     crates/rudder/src/metadata_client/testdata/MetadataInfoV2Vector.java \
 *     crates/rudder/src/metadata_client/testdata/metadata_info_v2.bin
 */
public final class MetadataInfoV2Vector {
    public static void main(String[] args) throws IOException {
        Map<String, String> params = new HashMap<>();
        params.put("application", "shop");
        params.put("methods", "add,sayHello");
        ServiceInfo service = new ServiceInfo("org.rudder.it.GreetingService", "blue", "1.0.0", "tri", 50051,
                "org.rudder.it.GreetingService", params);
        Map<String, ServiceInfo> services = new HashMap<>();
        services.put(service.getMatchKey(), service);
        MetadataInfo info = new MetadataInfo("shop", "6f1e2cd1a0b9", services);
        try (FileOutputStream out = new FileOutputStream(args[0])) {
            out.write(MetadataServiceVersionUtils.toV2(info).toByteArray());
        }
    }
}
