package org.rudder.it;

import org.apache.dubbo.config.ServiceConfig;

/** The {@link JavaTypesService} export every provider adds beside its GreetingService. */
final class JavaTypesServices {

    private JavaTypesServices() {
    }

    static ServiceConfig<JavaTypesService> create(String version, String group) {
        ServiceConfig<JavaTypesService> service = new ServiceConfig<>();
        service.setInterface(JavaTypesService.class);
        service.setRef(new JavaTypesServiceImpl());
        if (version != null) {
            service.setVersion(version);
        }
        if (group != null) {
            service.setGroup(group);
        }
        return service;
    }
}
