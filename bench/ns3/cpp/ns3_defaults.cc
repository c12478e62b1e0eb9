// Prints every attribute default and global value of the ns-3 build it is linked against, one
// per line ("ns3::Class::Attribute = value"), sorted, so that two ns-3 versions can be diffed
// (bench/ns3/ns3_defaults.py prints the same for the PyPI wheel). Run before any
// Config::SetDefault, so the values are the library's own.
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <iostream>
#include <set>
#include <string>

using namespace ns3;

int
main()
{
    std::set<std::string> lines;
    for (uint16_t i = 0; i < TypeId::GetRegisteredN(); ++i)
    {
        TypeId tid = TypeId::GetRegistered(i);
        for (std::size_t j = 0; j < tid.GetAttributeN(); ++j)
        {
            TypeId::AttributeInformation info = tid.GetAttribute(j);
            lines.insert(tid.GetName() + "::" + info.name + " = " +
                         info.initialValue->SerializeToString(info.checker));
        }
    }
    for (auto it = GlobalValue::Begin(); it != GlobalValue::End(); ++it)
    {
        StringValue v;
        (*it)->GetValue(v);
        lines.insert("global::" + (*it)->GetName() + " = " + v.Get());
    }
    for (const auto& l : lines)
    {
        std::cout << l << "\n";
    }
    return 0;
}
