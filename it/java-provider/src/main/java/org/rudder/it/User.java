package org.rudder.it;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/** A plain POJO sent both ways as a hessian2 object (class definition + fields). */
public class User implements Serializable {

    private static final long serialVersionUID = 1L;

    private String name;
    private int age;
    private List<String> tags = new ArrayList<>();

    /** Hessian needs a no-argument constructor. */
    public User() {
    }

    public User(String name, int age, List<String> tags) {
        this.name = name;
        this.age = age;
        this.tags = tags == null ? new ArrayList<>() : new ArrayList<>(tags);
    }

    public String getName() {
        return name;
    }

    public void setName(String name) {
        this.name = name;
    }

    public int getAge() {
        return age;
    }

    public void setAge(int age) {
        this.age = age;
    }

    public List<String> getTags() {
        return tags;
    }

    public void setTags(List<String> tags) {
        this.tags = tags;
    }

    @Override
    public boolean equals(Object other) {
        if (!(other instanceof User)) {
            return false;
        }
        User that = (User) other;
        return age == that.age && Objects.equals(name, that.name) && Objects.equals(tags, that.tags);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, age, tags);
    }

    @Override
    public String toString() {
        return "User{name=" + name + ", age=" + age + ", tags=" + tags + "}";
    }
}
