#include "proto/error_detail.h"

#include <gtest/gtest.h>

#include <string>

namespace zarrd::wire {
namespace {

// A length-delimited protobuf field (lengths below 128 here), written by hand.
std::string Field(int number, const std::string& bytes) {
  return std::string(1, static_cast<char>(number << 3 | 2)) +
         std::string(1, static_cast<char>(bytes.size())) + bytes;
}

TEST(ErrorDetail, AReasonTravelsAsGoogleRpcStatusWithAnErrorInfo) {
  const Status s =
      NotFound("host region \"h\" is not registered").WithReason(reason::kHostRegionNotRegistered);
  const grpc::Status g = ToGrpcStatus(s);
  EXPECT_EQ(g.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(g.error_message(), s.message());
  // google.rpc.Status{code 5, message, details [Any{ErrorInfo{reason, domain "zarrd"}}]}.
  const std::string info = Field(1, "HOST_REGION_NOT_REGISTERED") + Field(2, "zarrd");
  const std::string any = Field(1, "type.googleapis.com/google.rpc.ErrorInfo") + Field(2, info);
  const std::string expected = std::string("\x08\x05", 2) + Field(2, s.message()) + Field(3, any);
  EXPECT_EQ(g.error_details(), expected);
  const Status back = FromGrpcStatus(g);
  EXPECT_EQ(back.code(), StatusCode::kNotFound);
  EXPECT_EQ(back.message(), s.message());
  EXPECT_EQ(back.reason(), "HOST_REGION_NOT_REGISTERED");
}

TEST(ErrorDetail, NoReasonNoDetailsAndForeignDetailsAreIgnored) {
  const grpc::Status g = ToGrpcStatus(DataLoss("chunk c/0 is corrupt"));
  EXPECT_TRUE(g.error_details().empty());
  EXPECT_TRUE(FromGrpcStatus(g).reason().empty());
  // Another domain's ErrorInfo, and bytes that are no Status, leave the reason empty.
  const std::string info = Field(1, "QUOTA") + Field(2, "example.com");
  const std::string any = Field(1, "type.googleapis.com/google.rpc.ErrorInfo") + Field(2, info);
  const grpc::Status other(grpc::StatusCode::RESOURCE_EXHAUSTED, "m", Field(3, any));
  EXPECT_TRUE(FromGrpcStatus(other).reason().empty());
  const grpc::Status junk(grpc::StatusCode::INTERNAL, "m", "\xff\xff\xff");
  EXPECT_EQ(FromGrpcStatus(junk).code(), StatusCode::kInternal);
  EXPECT_TRUE(FromGrpcStatus(junk).reason().empty());
  EXPECT_TRUE(FromGrpcStatus(grpc::Status::OK).ok());
}

TEST(ErrorDetail, ContextKeepsTheReason) {
  const Status s = Unavailable("draining").WithReason(reason::kShuttingDown).WithContext("GetItem");
  EXPECT_EQ(s.message(), "GetItem: draining");
  EXPECT_EQ(FromGrpcStatus(ToGrpcStatus(s)).reason(), "SHUTTING_DOWN");
}

}  // namespace
}  // namespace zarrd::wire
