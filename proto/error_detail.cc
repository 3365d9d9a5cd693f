#include "proto/error_detail.h"

#include "zarrd/v1/error.pb.h"

namespace zarrd::wire {
namespace {
constexpr char kErrorInfoType[] = "type.googleapis.com/google.rpc.ErrorInfo";
constexpr char kDomain[] = "zarrd";
}  // namespace

grpc::Status ToGrpcStatus(const Status& status) {
  if (status.ok()) return grpc::Status::OK;
  const auto code = static_cast<grpc::StatusCode>(status.code());
  if (status.reason().empty()) return grpc::Status(code, status.message());
  v1::ErrorInfo info;
  info.set_reason(status.reason());
  info.set_domain(kDomain);
  v1::RpcStatus details;
  details.set_code(static_cast<int>(status.code()));
  details.set_message(status.message());
  auto* any = details.add_details();
  any->set_type_url(kErrorInfoType);
  any->set_value(info.SerializeAsString());
  return grpc::Status(code, status.message(), details.SerializeAsString());
}

Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return OkStatus();
  Status out(static_cast<StatusCode>(status.error_code()), status.error_message());
  v1::RpcStatus details;
  if (status.error_details().empty() || !details.ParseFromString(status.error_details())) {
    return out;
  }
  for (const auto& any : details.details()) {
    v1::ErrorInfo info;
    if (any.type_url() == kErrorInfoType && info.ParseFromString(any.value()) &&
        info.domain() == kDomain) {
      return out.WithReason(info.reason());
    }
  }
  return out;
}

}  // namespace zarrd::wire
