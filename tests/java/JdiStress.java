// SPDX-License-Identifier: Apache-2.0
// A JDI client for the relay tests: attaches to HOST:PORT (through ddmon or
// directly), makes a few thousand requests, sets a breakpoint in
// Sleeper.tick, receives events, clears everything and disposes.
// Prints "jdi ok REQUESTS EVENTS" on success; exits 1 on any failure.
import com.sun.jdi.*;
import com.sun.jdi.connect.*;
import com.sun.jdi.event.*;
import com.sun.jdi.request.*;
import java.util.*;

public class JdiStress {
    public static void main(String[] args) throws Exception {
        String host = args[0];
        String port = args[1];
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 2000;
        AttachingConnector conn = null;
        for (AttachingConnector c : Bootstrap.virtualMachineManager().attachingConnectors())
            if (c.name().equals("com.sun.jdi.SocketAttach")) conn = c;
        Map<String, Connector.Argument> a = conn.defaultArguments();
        a.get("hostname").setValue(host);
        a.get("port").setValue(port);
        a.get("timeout").setValue("15000");
        VirtualMachine vm = conn.attach(a);
        int requests = 0;
        for (int i = 0; i < rounds; i++) {
            for (ThreadReference t : vm.allThreads()) { t.name(); requests++; }
            requests++;
        }
        List<ReferenceType> cls = vm.classesByName("Sleeper");
        if (cls.isEmpty()) throw new RuntimeException("class Sleeper not loaded");
        Method tick = cls.get(0).methodsByName("tick").get(0);
        BreakpointRequest bp = vm.eventRequestManager().createBreakpointRequest(tick.location());
        bp.setSuspendPolicy(EventRequest.SUSPEND_EVENT_THREAD);
        bp.enable();
        int events = 0;
        EventQueue q = vm.eventQueue();
        long deadline = System.currentTimeMillis() + 20000;
        while (events < 3 && System.currentTimeMillis() < deadline) {
            EventSet set = q.remove(1000);
            if (set == null) continue;
            for (Event e : set) {
                if (e instanceof BreakpointEvent) {
                    BreakpointEvent be = (BreakpointEvent) e;
                    StackFrame f = be.thread().frame(0);
                    Value v = f.getValue(f.visibleVariableByName("value"));
                    if (v == null) throw new RuntimeException("no value");
                    events++;
                    requests += 3;
                }
            }
            set.resume();
        }
        if (events < 3) throw new RuntimeException("only " + events + " breakpoint events");
        vm.eventRequestManager().deleteAllBreakpoints();
        vm.dispose();
        System.out.println("jdi ok " + requests + " " + events);
    }
}
